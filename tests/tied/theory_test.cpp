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
  o.mixing = 0;
  EXPECT_THROW((void)slr::tied::solve_theory(p, o), std::invalid_argument);
  o = {};
  o.initial = slr::tied::overlaps{1.0, 2.0, 1.0};
  EXPECT_THROW((void)slr::tied::solve_theory(p, o), std::invalid_argument);
}

} // namespace
