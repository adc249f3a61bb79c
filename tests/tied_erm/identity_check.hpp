#pragma once
// The factorised = PSD-nuclear identity (docs/theory.md §T2) checked on one instance: the
// factorised L-BFGS minimum at k = 1 and k = 0.75 against the APG solution of the convex program.
#include <cmath>
#include <cstdint>
#include <iostream>

#include <gtest/gtest.h>
#include <Eigen/Eigenvalues>

#include "slr/tied_erm/solver.hpp"

namespace tied_erm_identity {

using slr::model::stream_purpose;
using slr::tied::parametrisation;
using namespace slr::tied_erm;

struct instance {
  slr::tied::problem p;
  teacher t;
  dataset data;
};

inline instance make(std::size_t d, double alpha, std::uint64_t seed) {
  slr::tied::problem p; // Fig. 1 setting: T = 2, k0 = 0.5, λ = 0.01, Δ = 0.5, β = β0 = 1
  p.alpha = alpha;
  auto t = teacher::draw(d, p.k0, seed);
  const auto n = static_cast<std::size_t>(std::llround(alpha * static_cast<double>(d * d)));
  auto data = dataset::generate(p, t, n, seed, stream_purpose::training_data);
  return {p, std::move(t), std::move(data)};
}

inline double relative_difference(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) { return (A - B).norm() / B.norm(); }

// §2.1: min_W ℒ(WWᵀ/√(rd)) + (λ/√k)‖W‖² = min_{S ⪰ 0} ℒ(S) + λ d Tr S whenever the convex minimiser
// has rank ≤ k d. The APG solves the convex program from S = 0, independently of the L-BFGS runs.
inline void expect_factorised_equals_convex(std::size_t d, double alpha, std::uint64_t seed) {
  auto in = make(d, alpha, seed);
  solver_settings convex_settings;
  convex_settings.tolerance = 1e-10;
  convex_settings.max_iterations = 20000;
  in.p.param = parametrisation::psd_nuclear;
  const auto convex = solve(in.p, in.data, convex_settings, seed);
  EXPECT_EQ(convex.report.status, solver_status::converged) << convex.report.iterations;
  const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(convex.S).eigenvalues(); // ascending
  const double convex_rank = static_cast<double>((ev.array() > 1e-10 * ev(ev.size() - 1)).count()) / static_cast<double>(d);
  empirical_risk risk(in.p, in.data);
  const double convex_kkt = kkt_residual(in.p, risk, convex.S);
  std::cout << "d=" << d << " alpha=" << alpha << " convex: it=" << convex.report.iterations
            << " evals=" << convex.report.evaluations << " obj=" << convex.report.objective_per_d2
            << " rank=" << convex_rank << " kkt=" << convex_kkt << " t=" << convex.report.wall_seconds << "\n";
  for (double k : {1.0, 0.75}) {
    in.p.param = parametrisation::factorised;
    in.p.k = k;
    solver_settings s;
    const auto fact = solve(in.p, in.data, s, seed + 100);
    const double diff = relative_difference(fact.S, convex.S);
    in.p.param = parametrisation::psd_nuclear;
    const double kkt = kkt_residual(in.p, risk, fact.S);
    std::cout << "  k=" << k << " it=" << fact.report.iterations << " evals=" << fact.report.evaluations
              << " status=" << solver_status_name(fact.report.status) << " relgrad=" << fact.report.relative_gradient
              << " obj=" << fact.report.objective_per_d2 << " diff=" << diff << " kkt=" << kkt
              << " t=" << fact.report.wall_seconds << "\n";
    EXPECT_LE(diff, 1e-4) << "k = " << k;
    EXPECT_LE(kkt, 1e-4) << "k = " << k;
    EXPECT_NEAR(fact.report.objective_per_d2, convex.report.objective_per_d2, 1e-9 * convex.report.objective_per_d2);
  }
}

} // namespace tied_erm_identity
