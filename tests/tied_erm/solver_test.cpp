#include "slr/tied_erm/solver.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <stdexcept>
#include <string>

#include <vector>

#include <Eigen/Eigenvalues>

#include "slr/erm/normals.hpp"

namespace {

using slr::model::stream_purpose;
using slr::tied::parametrisation;
using namespace slr::tied_erm;

struct instance {
  slr::tied::problem p;
  teacher t;
  dataset data;
};

instance make(std::size_t d, double alpha, std::uint64_t seed) {
  slr::tied::problem p; // Fig. 1 setting: T = 2, k0 = 0.5, λ = 0.01, Δ = 0.5, β = β0 = 1
  p.alpha = alpha;
  auto t = teacher::draw(d, p.k0, seed);
  const auto n = static_cast<std::size_t>(std::llround(alpha * static_cast<double>(d * d)));
  auto data = dataset::generate(p, t, n, seed, stream_purpose::training_data);
  return {p, std::move(t), std::move(data)};
}

double relative_difference(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) { return (A - B).norm() / B.norm(); }

// §2.1: min_W ℒ(WWᵀ/√(rd)) + (λ/√k)‖W‖² = min_{S ⪰ 0} ℒ(S) + λ d Tr S whenever the convex minimiser
// has rank ≤ k d. The APG solves the convex program from S = 0, independently of the L-BFGS runs.
void expect_factorised_equals_convex(std::size_t d, double alpha, std::uint64_t seed) {
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

TEST(TiedErmSolver, FactorisedMinimumIsThePsdNuclearSolutionAtSmallAlpha) { expect_factorised_equals_convex(40, 0.05, 0); }
TEST(TiedErmSolver, FactorisedMinimumIsThePsdNuclearSolution) { expect_factorised_equals_convex(40, 0.5, 1); }
TEST(TiedErmSolver, FactorisedMinimumIsThePsdNuclearSolutionAtD60) { expect_factorised_equals_convex(60, 0.5, 2); }

TEST(TiedErmSolver, ConvexSolutionIsPsdWithExactZerosAndKktZero) {
  auto in = make(30, 0.5, 3);
  in.p.param = parametrisation::psd_nuclear;
  solver_settings s;
  s.tolerance = 1e-10;
  const auto sol = solve(in.p, in.data, s, 3);
  ASSERT_EQ(sol.report.status, solver_status::converged);
  EXPECT_TRUE(sol.W.size() == 0);
  const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(sol.S).eigenvalues(); // ascending
  ASSERT_EQ(ev.size(), 30);
  const std::vector<double> sorted(ev.data(), ev.data() + 30);
  const double top = sorted.back();
  EXPECT_GE(sorted.front(), -1e-12 * top);
  // The soft threshold leaves exact zeros (up to the rounding of U Λ Uᵀ), not small eigenvalues.
  const auto zeros = (ev.array().abs() < 1e-12 * top).count();
  const auto small = (ev.array().abs() < 1e-3 * top).count();
  EXPECT_GT(zeros, 0);
  EXPECT_EQ(zeros, small);
  empirical_risk risk(in.p, in.data);
  EXPECT_LT(kkt_residual(in.p, risk, sol.S), 1e-8);
  // Away from the minimiser the residual is O(1).
  EXPECT_GT(kkt_residual(in.p, risk, in.t.S), 1e-2);
  // objective_per_d2 = (ℒ + λ d Tr S)/d².
  EXPECT_NEAR(sol.report.objective_per_d2, (risk.loss(sol.S) + in.p.lambda * 30 * sol.S.trace()) / 900.0,
              1e-14 * sol.report.objective_per_d2);
}

TEST(TiedErmSolver, DirectMinimumDoesNotDependOnTheStart) {
  auto in = make(30, 0.5, 4);
  in.p.param = parametrisation::direct;
  solver_settings s;
  const auto from_zero = solve(in.p, in.data, s, 4);
  EXPECT_EQ(from_zero.report.status, solver_status::converged) << from_zero.report.message;
  EXPECT_LE(from_zero.report.relative_gradient, s.tolerance);
  objective f(in.p, in.data);
  const auto from_teacher = minimise_lbfgs(f, f.from_matrix(in.t.S), s);
  EXPECT_LE(relative_difference(from_teacher.S, from_zero.S), 1e-5);
  EXPECT_NEAR(from_teacher.report.objective_per_d2, from_zero.report.objective_per_d2,
              1e-10 * from_zero.report.objective_per_d2);
  // Unlike the tied student, the ridge solution has negative eigenvalues (§4.4).
  EXPECT_LT(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(from_zero.S).eigenvalues().minCoeff(), 0.0);
}

TEST(TiedErmSolver, FactorisedReportsWeightsOfItsS) {
  auto in = make(20, 0.5, 5);
  in.p.k = 0.75;
  solver_settings s;
  const auto sol = solve(in.p, in.data, s, 5);
  ASSERT_EQ(sol.W.rows(), 20);
  ASSERT_EQ(sol.W.cols(), 15);
  EXPECT_LT((sol.W * sol.W.transpose() / std::sqrt(15.0 * 20.0) - sol.S).norm(), 1e-12 * sol.S.norm());
  EXPECT_GT(sol.report.iterations, 10u);
  EXPECT_GE(sol.report.evaluations, sol.report.iterations);
  EXPECT_EQ(solver_status_name(sol.report.status), "converged");
  // A cap of one iteration is reported as such.
  s.max_iterations = 1;
  EXPECT_EQ(solve(in.p, in.data, s, 5).report.status, solver_status::iteration_cap);
}

TEST(TiedErmSolver, InitialWeightsAreAddressedColumns) {
  const Eigen::MatrixXd W = initial_weights(12, 5, 0.5, 9);
  std::vector<double> column(12);
  slr::erm::normal_stream(9, stream_purpose::initialisation, 0, 3).fill(column);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(W(i, 3), 0.5 * column[static_cast<std::size_t>(i)]);
}

TEST(TiedErmSolver, BadSettingsNameTheSetting) {
  solver_settings s;
  s.tolerance = 0;
  try {
    s.validate();
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("tolerance:", 0), 0u);
  }
  s = {};
  s.init_scale = -1;
  EXPECT_THROW(s.validate(), std::invalid_argument);
  s = {};
  s.max_iterations = 0;
  EXPECT_THROW(s.validate(), std::invalid_argument);
  auto in = make(10, 0.5, 1);
  objective f(in.p, in.data);
  EXPECT_THROW((void)minimise_lbfgs(f, Eigen::VectorXd::Zero(3), {}), std::invalid_argument);
}

} // namespace
