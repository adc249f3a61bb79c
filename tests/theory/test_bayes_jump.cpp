// The jump of the Bayes-optimal state evolution in α (include/slr/theory/bayes_jump.hpp):
// bracketed to the tolerance, confirmed by independent solves just outside the bracket, the free
// entropies exchanging the lead inside it where both branches exist (at Δ = 0 the exact-recovery
// branch winning where it appears), an uncertainty that covers two seeds, and no jump reported
// where the curve is continuous (larger label noise).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "slr/theory/bayes_jump.hpp"

namespace {
using namespace slr;

model::problem spiked(double delta) {
  model::problem p;
  p.task = model::task(model::task_kind::spiked, 1.0);
  p.lengths = model::length_law::fixed(3);
  p.delta = delta;
  return p;
}

theory::bayes_jump_options options(double tolerance) {
  theory::bayes_jump_options o;
  o.alpha_min = 0.5;
  o.alpha_max = 4;
  o.scan_points = 6;
  o.relative_tolerance = tolerance;
  o.solver.samples = 10000;
  o.batches = 0; // the uncertainty is tested on its own below
  return o;
}

// The chosen fixed point of an independent solve at α (same samples).
theory::state_evolution_result solve_at(const model::problem& p, double alpha, const theory::bayes_jump_options& o,
                                        std::uint64_t seed) {
  return theory::state_evolution(p, alpha, o.solver).solve(seed);
}

TEST(BayesJump, FreeEntropiesCrossInsideTheBracket) {
  // Δ = 0.03: both branches coexist around the jump, and their free entropies cross.
  const auto p = spiked(0.03);
  const auto o = options(1e-3);
  const auto jump = theory::locate_bayes_jump(p, o, 5);
  ASSERT_EQ(jump.status, theory::solve_status::ok) << jump.message;
  ASSERT_TRUE(jump.found) << jump.message;
  EXPECT_LE(jump.above.alpha / jump.below.alpha - 1, 1e-3);
  EXPECT_LE(jump.below.alpha, jump.alpha_jump);
  EXPECT_GE(jump.above.alpha, jump.alpha_jump);
  EXPECT_LT(jump.below.free_entropy_gap(), 0);
  EXPECT_GT(jump.above.free_entropy_gap(), 0);
  // A drop of the Bayes-optimal risk (never a rise) and a large change of q_vv.
  EXPECT_GT(jump.gap_risk, 0.1);
  EXPECT_GT(jump.gap_q, 0.2);
  // Independent solves 1 % outside the bracket sit on the two branches.
  const auto lower = solve_at(p, jump.below.alpha / 1.01, o, 5);
  const auto upper = solve_at(p, jump.above.alpha * 1.01, o, 5);
  EXPECT_NEAR(lower.chosen.q(1, 1), jump.below.result.chosen.q(1, 1), 0.05);
  EXPECT_NEAR(upper.chosen.q(1, 1), jump.above.result.chosen.q(1, 1), 0.05);
  EXPECT_GT(upper.chosen.q(1, 1) - lower.chosen.q(1, 1), 0.2);
  std::cout << "Delta = 0.03: jump at alpha = " << jump.alpha_jump << " in [" << jump.below.alpha << ", "
            << jump.above.alpha << "], risk " << jump.below.result.chosen.test_risk.value << " -> "
            << jump.above.result.chosen.test_risk.value << ", " << jump.evaluations << " solves\n";
}

TEST(BayesJump, NoiselessJumpMatchesTheCurveOnAGrid) {
  // Δ = 0: the jump to exact recovery of v* (q_vv = 1). The 41-point curve of the common-samples
  // test drops by > 0.1 between neighbours in α ∈ (1.0, 1.3); the located jump lies there.
  const auto jump = theory::locate_bayes_jump(spiked(0.0), options(1e-3), 11);
  ASSERT_TRUE(jump.found) << jump.message;
  EXPECT_GT(jump.alpha_jump, 1.0);
  EXPECT_LT(jump.alpha_jump, 1.3);
  EXPECT_GT(jump.above.result.chosen.q(1, 1), 0.999);
  EXPECT_LT(jump.below.result.chosen.q(1, 1), 0.8);
  EXPECT_GT(jump.gap_risk, 0.15);
  // The informed branch recovers v exactly (q_vv → 1) and its free entropy diverges, so the jump is
  // where that branch appears, not where a finite free-entropy difference (an artefact of stopping
  // the iteration) changes sign.
  EXPECT_TRUE(jump.above.exact_recovery);
  EXPECT_FALSE(jump.below.exact_recovery);
  EXPECT_TRUE(std::isinf(jump.above.free_entropy_gap()));
  EXPECT_NE(jump.message.find("recovers v exactly"), std::string::npos) << jump.message;
  EXPECT_NEAR(jump.alpha_jump, std::sqrt(jump.below.alpha * jump.above.alpha), 1e-12);
}

TEST(BayesJump, TwoSeedsAgreeWithinTheUncertaintyTheyReport) {
  // The seed moves α_jump by several bracket widths (the samples are common to a whole search):
  // the reported uncertainty comes from independent batches, is far wider than the bracket, and
  // covers the difference between two seeds.
  auto o = options(1e-3);
  o.solver.samples = 20000;
  o.batches = 4;
  const auto a = theory::locate_bayes_jump(spiked(0.0), o, 1);
  const auto b = theory::locate_bayes_jump(spiked(0.0), o, 2);
  ASSERT_TRUE(a.found && b.found) << a.message << " / " << b.message;
  for (const auto* jump : {&a, &b}) {
    ASSERT_TRUE(std::isfinite(jump->alpha_jump_stderr)) << jump->message;
    EXPECT_EQ(jump->batch_alpha_jumps.size(), 4u) << jump->message;
    EXPECT_GT(jump->alpha_jump_stderr, 2 * (jump->above.alpha - jump->below.alpha)) << jump->message;
    EXPECT_LT(jump->alpha_jump_stderr, 0.05) << jump->message;
  }
  EXPECT_LT(std::abs(a.alpha_jump - b.alpha_jump), 3 * std::hypot(a.alpha_jump_stderr, b.alpha_jump_stderr));
  std::cout << "alpha_jump: seed 1 " << a.alpha_jump << " +- " << a.alpha_jump_stderr << ", seed 2 " << b.alpha_jump
            << " +- " << b.alpha_jump_stderr << " (brackets " << a.above.alpha - a.below.alpha << ", "
            << b.above.alpha - b.below.alpha << ")\n";
}

TEST(BayesJump, ContinuousCurveHasNoJump) {
  // Δ = 0.1: the curve is steep but continuous; the change of q across the bracket shrinks with it.
  const auto jump = theory::locate_bayes_jump(spiked(0.1), options(1e-3), 5);
  EXPECT_EQ(jump.status, theory::solve_status::ok) << jump.message;
  EXPECT_FALSE(jump.found) << "alpha " << jump.alpha_jump << ", gap " << jump.gap_q;
  EXPECT_TRUE(std::isnan(jump.alpha_jump));
  EXPECT_LT(jump.gap_q, 0.02);
  EXPECT_NE(jump.message.find("continuous"), std::string::npos) << jump.message;
}

TEST(BayesJump, RejectsBadOptions) {
  auto o = options(1e-3);
  o.alpha_min = 4;
  o.alpha_max = 1;
  EXPECT_THROW((void)theory::locate_bayes_jump(spiked(0.0), o, 1), std::invalid_argument);
  o = options(1e-3);
  o.solver.uninformed = false;
  EXPECT_THROW((void)theory::locate_bayes_jump(spiked(0.0), o, 1), std::invalid_argument);
  o = options(0);
  EXPECT_THROW((void)theory::locate_bayes_jump(spiked(0.0), o, 1), std::invalid_argument);
}

} // namespace
