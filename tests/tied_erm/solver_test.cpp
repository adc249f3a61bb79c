#include "slr/tied_erm/solver.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Eigenvalues>

#include "identity_check.hpp"
#include "slr/erm/normals.hpp"

namespace {

using slr::model::stream_purpose;
using slr::tied::parametrisation;
using namespace slr::tied_erm;
using tied_erm_identity::expect_factorised_equals_convex;
using tied_erm_identity::make;
using tied_erm_identity::relative_difference;

TEST(TiedErmSolver, FactorisedMinimumIsThePsdNuclearSolutionAtSmallAlpha) { expect_factorised_equals_convex(40, 0.05, 0); }
TEST(TiedErmSolver, FactorisedMinimumIsThePsdNuclearSolution) { expect_factorised_equals_convex(40, 0.5, 1); }
TEST(TiedErmSolver, FactorisedMinimumIsThePsdNuclearSolutionAtD60) { expect_factorised_equals_convex(60, 0.5, 2); }
TEST(TiedErmSolver, FactorisedMinimumIsThePsdNuclearSolutionAtD60SmallAlpha) {
  expect_factorised_equals_convex(60, 0.05, 4);
}
TEST(TiedErmSolver, FactorisedMinimumIsThePsdNuclearSolutionAtAlphaFour) { expect_factorised_equals_convex(60, 4.0, 3); }

TEST(TiedErmSolver, FactorisedFromTheConvexStartReachesTheSameMinimum) {
  auto in = make(40, 2.0, 6);
  solver_settings s;
  const auto random = solve(in.p, in.data, s, 6);
  s.convex_start = true;
  const auto convex = solve(in.p, in.data, s, 6);
  EXPECT_EQ(convex.report.status, solver_status::converged);
  EXPECT_EQ(convex.report.message.rfind("convex start", 0), 0u) << convex.report.message;
  EXPECT_LE(relative_difference(convex.S, random.S), 1e-4);
  EXPECT_LT((convex.W * convex.W.transpose() / 40.0 - convex.S).norm(), 1e-12 * convex.S.norm());
  std::cout << "convex start: " << convex.report.evaluations << " evaluations, random start: "
            << random.report.evaluations << "\n";
}

TEST(TiedErmSolver, ConvexStartWithAnActiveRankCapKeepsTheTopEigenpairs) {
  // k = 0.4 below the convex rank (≈ 0.7 at α = 2): the start is the rank-r truncation and L-BFGS
  // continues on the capped (non-convex) problem; the result has rank ≤ k d and is a stationary
  // point at least as good as from a random start (up to the tolerance).
  auto in = make(30, 2.0, 7);
  in.p.k = 0.4;
  solver_settings s;
  const auto random = solve(in.p, in.data, s, 7);
  s.convex_start = true;
  const auto convex = solve(in.p, in.data, s, 7);
  EXPECT_EQ(convex.report.status, solver_status::converged) << convex.report.message;
  ASSERT_EQ(convex.W.cols(), 12);
  const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(convex.S).eigenvalues();
  EXPECT_EQ((ev.array() > 1e-8).count(), 12);
  std::cout << "capped: objective/d² convex start " << convex.report.objective_per_d2 << ", random start "
            << random.report.objective_per_d2 << "\n";
  EXPECT_LE(convex.report.objective_per_d2, random.report.objective_per_d2 * (1 + 1e-9));
}

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
