// Slow test (LABELS slow): the Bayes-optimal state evolution at L = 1 against its closed form
// to 1e-4, with a Monte Carlo sample large enough that the MC error is well below that.
// At L = 1 there is no location uncertainty: the v-part is Bayes-optimal Gaussian linear
// regression, q̂_vv = α/(Δ² + 1 − q_vv), q_vv = q̂_vv/(1 + q̂_vv), test risk Δ² + 1 − q_vv; the
// spiked k-part sees only the token mean, q_kk = αν/(1 + αν).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "slr/theory/state_evolution.hpp"

namespace {
using namespace slr;

double exact_q_vv(double alpha, double delta) {
  double q = 0;
  for (int i = 0; i < 100000; ++i) {
    const double q_hat = alpha / (delta * delta + 1 - q);
    q = q_hat / (1 + q_hat);
  }
  return q;
}

// MC standard deviation of the solver's q_vv and test risk at S samples, by the delta method:
// q̂_vv is α times a mean of u² with u ~ N(0, Δ² + 1 − q) at the fixed point, so a relative MC
// error δ ~ N(0, 2/S) of that mean acts as α → α(1 + δ); the risk estimate adds the MC error of a
// mean of (z* − ω_z)² ~ (1 − q)χ²₁. (Stratification of z* only lowers both.)
void predicted_mc_std(double alpha, double delta, double samples, double& q_std, double& risk_std) {
  const double h = 1e-5;
  const double dq_dalpha = (exact_q_vv(alpha * (1 + h), delta) - exact_q_vv(alpha * (1 - h), delta)) / (2 * alpha * h);
  const double relative = std::sqrt(2 / samples);
  q_std = std::abs(alpha * dq_dalpha) * relative;
  risk_std = q_std + (1 - exact_q_vv(alpha, delta)) * relative;
}

TEST(StateEvolutionSlow, LengthOneClosedFormTo1e4) {
  constexpr std::size_t samples = 4'000'000;
  constexpr double tolerance = 1e-4;
  const double nu = 1.0;
  for (const auto& [alpha, delta] : {std::pair{8.0, 0.3}, std::pair{4.0, 0.2}}) {
    double q_std = 0, risk_std = 0;
    predicted_mc_std(alpha, delta, static_cast<double>(samples), q_std, risk_std);
    ASSERT_LT(risk_std, tolerance / 4) << "the sample is too small for a 1e-4 check at alpha " << alpha;

    model::problem p;
    p.task = model::task(model::task_kind::spiked, nu);
    p.lengths = model::length_law::fixed(1);
    p.delta = delta;
    theory::state_evolution_options o;
    o.samples = samples;
    o.tolerance = 1e-9;
    o.threads = 0;
    const auto result = theory::state_evolution(p, alpha, o).solve(4242);
    ASSERT_EQ(result.status, theory::solve_status::ok) << result.chosen.message;
    const double q_vv = exact_q_vv(alpha, delta), q_kk = alpha * nu / (1 + alpha * nu);
    const double risk = delta * delta + 1 - q_vv;
    const double q_hat_vv = alpha / (delta * delta + 1 - q_vv);
    for (const auto& b : result.branches) {
      ASSERT_EQ(b.status, theory::solve_status::ok) << b.start << ": " << b.message;
      const double q_hat_relative = std::abs(b.q_hat(1, 1) - q_hat_vv) / q_hat_vv;
      std::printf("[SE L=1 closed form] alpha=%g Delta=%g nu=%g %s (S=%zu): q_kk error %.2e, q_vv error %.2e "
                  "(predicted MC std %.1e), risk error %.2e (predicted MC std %.1e, stratified stderr %.1e), "
                  "relative q_hat_vv error %.2e\n",
                  alpha, delta, nu, b.start.c_str(), samples, b.q(0, 0) - q_kk, b.q(1, 1) - q_vv, q_std,
                  b.test_risk.value - risk, risk_std, b.test_risk.stderr, q_hat_relative);
      EXPECT_NEAR(b.q(0, 0), q_kk, tolerance) << b.start;
      EXPECT_NEAR(b.q(1, 1), q_vv, tolerance) << b.start;
      EXPECT_NEAR(b.test_risk.value, risk, tolerance) << b.start;
      EXPECT_LT(b.test_risk.stderr, tolerance / 4) << b.start;
      // q̂_vv/(1 + q̂_vv) = q_vv: the conjugate to the accuracy the q_vv check implies.
      EXPECT_LT(std::abs(b.q_hat(1, 1) / (1 + b.q_hat(1, 1)) - q_vv), tolerance) << b.start;
    }
  }
}
} // namespace
