// RS fixed point of tied attention against the theory blocks of tests/reference/tied_attention.json
// (an independent numpy/scipy implementation; trust: q, m, V to 3e-3 and test/train errors to 2e-3
// relative; its hats are Hessian-form, ours Stein-form, which agree to 1e-3 at β = 1).
#include "slr/tied/theory.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

namespace {

using nlohmann::json;

json reference() {
  std::ifstream in(std::string(SLR_REFERENCE_DIR) + "/tied_attention.json");
  if (!in) throw std::runtime_error("cannot open tied_attention.json in " + std::string(SLR_REFERENCE_DIR));
  return json::parse(in);
}

void expect_rel(double value, double ref, double tol, const std::string& what) {
  EXPECT_NEAR(value / ref, 1.0, tol) << what << ": " << value << " vs reference " << ref;
  std::printf("  %-16s %.6g  ref %.6g  rel %+.2e  (tol %.0e)\n", what.c_str(), value, ref, value / ref - 1, tol);
}

class TiedTheoryReference : public ::testing::TestWithParam<const char*> {};

TEST_P(TiedTheoryReference, FixedPointMatches) {
  const std::string key = GetParam();
  const auto e = reference()["theory"][key];
  slr::tied::problem p;
  p.alpha = e["alpha"].get<double>();
  p.param = e["reg"].get<std::string>() == "ridge" ? slr::tied::parametrisation::direct
                                                   : slr::tied::parametrisation::factorised;
  const auto r = slr::tied::solve_theory(p);
  std::printf("%s: status %s residual %.2e iterations %d + %d, %.2f s, Stein-Hessian m_hat %.1e V_hat %.1e\n",
              key.c_str(), std::string(slr::tied::theory_status_name(r.status)).c_str(), r.residual,
              r.iterations_coarse, r.iterations, r.seconds, r.hat_m_rel_diff, r.hat_V_rel_diff);
  ASSERT_EQ(r.status, slr::tied::theory_status::ok) << r.message;
  expect_rel(r.x.q, e["q"].get<double>(), 3e-3, "q");
  expect_rel(r.x.m, e["m"].get<double>(), 3e-3, "m");
  expect_rel(r.x.V, e["V"].get<double>(), 3e-3, "V");
  expect_rel(r.mse_S, e["mse_S"].get<double>(), 3e-3, "mse_S");
  expect_rel(r.test_clean, e["test_clean"].get<double>(), 2e-3, "test_clean");
  expect_rel(r.test_noisy, e["test_noisy"].get<double>(), 2e-3, "test_noisy");
  expect_rel(r.train_loss, e["train_loss"].get<double>(), 2e-3, "train_loss");
  expect_rel(r.objective_per_d2, e["objective_per_d2"].get<double>(), 2e-3, "objective/d2");
  expect_rel(r.trace_per_d, e["trace_per_d"].get<double>(), 3e-3, "trace_per_d");
  // The rank fraction μ_δ((ε, ∞)) moves with δ and ε, themselves within 3e-3 of the reference.
  EXPECT_NEAR(r.rank_fraction, e["rank_fraction"].get<double>(), 3e-3);
  std::printf("  %-16s %.6g  ref %.6g\n", "rank_fraction", r.rank_fraction, e["rank_fraction"].get<double>());
  EXPECT_EQ(r.frac_two_minima, 0.0);
  EXPECT_LT(std::abs(r.hat_m_rel_diff), 2e-3);
  EXPECT_LT(std::abs(r.hat_V_rel_diff), 2e-3);
  ASSERT_EQ(r.spectrum.quantiles.size(), 101u);
  const auto& qs = e["eig_quantiles"];
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const double ref = qs[i].get<double>();
    EXPECT_NEAR(r.spectrum.quantiles[10 * i], ref, 3e-3 * (1 + std::abs(ref))) << "p = " << i / 10.0;
  }
  EXPECT_NEAR(r.atom_at_0, e["atom_at_0"].get<double>(), 3e-3);
}

INSTANTIATE_TEST_SUITE_P(Blocks, TiedTheoryReference,
                         ::testing::Values("psd_nuclear_alpha0.05", "psd_nuclear_alpha0.5", "ridge_alpha0.05",
                                           "ridge_alpha0.5"));

TEST(TiedTheory, IsDeterministicAndValidatesOptions) {
  slr::tied::problem p;
  p.alpha = 0.3;
  slr::tied::theory_options o;
  o.log2_points_coarse = 0;
  o.log2_points = 10;
  o.spectrum = false;
  const auto a = slr::tied::solve_theory(p, o), b = slr::tied::solve_theory(p, o);
  EXPECT_EQ(a.x.q, b.x.q);
  EXPECT_EQ(a.test_clean, b.test_clean);
  // Warm starts are an economy only: the same fixed point (up to the 1e-7 tolerance) with all
  // 2^T starts at every point of every evaluation.
  o.log2_points_coarse = 10;
  o.log2_points = 13;
  o.warm_starts = true;
  const auto warm = slr::tied::solve_theory(p, o);
  o.warm_starts = false;
  const auto cold = slr::tied::solve_theory(p, o);
  ASSERT_EQ(warm.status, slr::tied::theory_status::ok);
  ASSERT_EQ(cold.status, slr::tied::theory_status::ok);
  EXPECT_NEAR(warm.x.q / cold.x.q, 1, 1e-6);
  EXPECT_NEAR(warm.x.m / cold.x.m, 1, 1e-6);
  EXPECT_NEAR(warm.x.V / cold.x.V, 1, 1e-6);
  EXPECT_NEAR(warm.train_loss / cold.train_loss, 1, 1e-6);
  EXPECT_LT(warm.newton_steps, cold.newton_steps);
  o.mixing = 0;
  EXPECT_THROW((void)slr::tied::solve_theory(p, o), std::invalid_argument);
  o = {};
  o.initial = slr::tied::overlaps{1.0, 2.0, 1.0};
  EXPECT_THROW((void)slr::tied::solve_theory(p, o), std::invalid_argument);
}

} // namespace

namespace {

void expect_quoted(double value, double quoted, double rel_tol, const char* what) {
  EXPECT_NEAR(value / quoted, 1.0, rel_tol) << what << ": " << value << " vs " << quoted;
  std::printf("  %-16s %.6g  quoted %.6g  rel %+.2e  (tol %.0e)\n", what, value, quoted, value / quoted - 1, rel_tol);
}

// docs/theory.md §T7 (independent prototype, QMC 2^13 → 2^15, quoted to 3–4 digits): T = 3,
// α = 1, factorised: test_clean 0.0224, test_noisy 0.1457, train 0.1072, rank 0.704. Tolerance:
// the 2e-3 trust of the reference theory plus the rounding of the quoted digits (≤ 2.3e-3).
TEST(TiedTheory, SequenceLengthThreeMatchesPrototype) {
  slr::tied::problem p;
  p.T = 3;
  p.alpha = 1;
  slr::tied::theory_options o;
  o.log2_points_coarse = 13;
  o.log2_points = 15;
  const auto r = slr::tied::solve_theory(p, o);
  std::printf("T = 3, alpha = 1: %s, %.2f s\n", std::string(slr::tied::theory_status_name(r.status)).c_str(),
              r.seconds);
  ASSERT_EQ(r.status, slr::tied::theory_status::ok) << r.message;
  expect_quoted(r.test_clean, 0.0224, 4.5e-3, "test_clean");
  expect_quoted(r.test_noisy, 0.1457, 2.5e-3, "test_noisy");
  expect_quoted(r.train_loss, 0.1072, 2.5e-3, "train_loss");
  EXPECT_NEAR(r.rank_fraction, 0.704, 1.5e-3);
}

// §7.7: at β = β0 = 2, α = 0.5 the prox has competing minima at 3.5 % of the channel points; the
// Stein-form RS (two Sobol scrambles agree to 0.1 %) gives q = 2.877, m = 1.817, test_clean 0.268,
// test_noisy 0.387, train 0.0232, objective/d² 0.0222, and the Hessian forms differ by 3–20 %.
// Tolerance: 3e-3 (q, m: scramble spread 1e-3 plus the trust 3e-3 of the reference), 5e-3 on
// quantities quoted to 3 digits (rounding up to 2.2e-3 plus the same spread).
TEST(TiedTheory, CompetingProxMinimaAtBetaTwoMatchPrototype) {
  slr::tied::problem p;
  p.alpha = 0.5;
  p.beta = p.beta0 = 2;
  const auto r = slr::tied::solve_theory(p);
  std::printf("beta = 2, alpha = 0.5: %s, %.2f s, frac_two_minima %.4f, Stein-Hessian m_hat %.3f V_hat %.3f\n",
              std::string(slr::tied::theory_status_name(r.status)).c_str(), r.seconds, r.frac_two_minima,
              r.hat_m_rel_diff, r.hat_V_rel_diff);
  ASSERT_EQ(r.status, slr::tied::theory_status::ok) << r.message;
  expect_quoted(r.x.q, 2.877, 3e-3, "q");
  expect_quoted(r.x.m, 1.817, 3e-3, "m");
  expect_quoted(r.test_clean, 0.268, 5e-3, "test_clean");
  expect_quoted(r.test_noisy, 0.387, 5e-3, "test_noisy");
  expect_quoted(r.train_loss, 0.0232, 5e-3, "train_loss");
  expect_quoted(r.objective_per_d2, 0.0222, 5e-3, "objective/d2");
  EXPECT_NEAR(r.frac_two_minima, 0.035, 0.003);
  EXPECT_GT(std::abs(r.hat_m_rel_diff), 0.03);
  EXPECT_GT(std::abs(r.hat_V_rel_diff), 0.03);
}

// §7.7: rank cap k = 0.6 below the predicted rank 0.718 at α = 4: q 1.19376, test_clean 0.00817,
// objective/d² 0.27862 (uncapped 1.19465, 0.00819, 0.27830); the changes are what the cap predicts
// (Δq = −8.9e-4, Δobjective = +3.2e-4). Absolute tolerances: the 3e-3 / 2e-3 relative trust.
TEST(TiedTheory, RankCapBelowPredictedRank) {
  slr::tied::problem p;
  p.alpha = 4;
  const auto free = slr::tied::solve_theory(p);
  p.k = 0.6;
  const auto capped = slr::tied::solve_theory(p);
  ASSERT_EQ(free.status, slr::tied::theory_status::ok);
  ASSERT_EQ(capped.status, slr::tied::theory_status::ok);
  EXPECT_FALSE(free.rank_capped);
  EXPECT_TRUE(capped.rank_capped);
  EXPECT_NEAR(capped.rank_fraction, 0.6, 1e-7); // quantile (200-node cdf) vs 400-node functionals
  expect_quoted(free.x.q, 1.19465, 3e-3, "q (k = 1)");
  expect_quoted(capped.x.q, 1.19376, 3e-3, "q (k = 0.6)");
  expect_quoted(capped.test_clean, 0.00817, 2e-3, "test_clean");
  expect_quoted(capped.objective_per_d2, 0.27862, 2e-3, "objective/d2");
  // Paired differences on a common QMC sample: QMC error largely cancels.
  EXPECT_NEAR(capped.objective_per_d2 - free.objective_per_d2, 3.2e-4, 0.5e-4);
  EXPECT_NEAR(capped.x.q - free.x.q, -8.9e-4, 3e-4);
  std::printf("  cap: dq %.3g dobj %.3g dclean %.3g\n", capped.x.q - free.x.q,
              capped.objective_per_d2 - free.objective_per_d2, capped.test_clean - free.test_clean);
}

} // namespace
