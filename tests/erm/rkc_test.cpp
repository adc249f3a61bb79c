// Runge–Kutta–Chebyshev steps: the stability bound against the closed form of Sommeijer et al.,
// bounded amplification on all of [−β(s), 0], second order on a nonlinear problem, an error
// estimate of order h³, the stage rule, and a stiff linear system crossed with large steps.
#include "slr/erm/rkc.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace {
using namespace slr::erm;

// Amplification of one step on y' = −z y / h (i.e. h·λ = −z) from y = 1.
double amplification(const rkc::scheme& c, double z) {
  const Eigen::VectorXd y = Eigen::VectorXd::Constant(1, 1.0);
  const auto f = [z](const Eigen::VectorXd& x, Eigen::VectorXd& fx) { fx = -z * x; };
  Eigen::VectorXd out;
  rkc::step(c, f, y, -z * y, 1.0, out);
  return out[0];
}

TEST(Rkc, StabilityBoundMatchesTheClosedForm) {
  // β(s) ≈ (2/3)(s² − 1)(1 − 2ε/15) with ε = 2/13 (Sommeijer, Shampine & Verwer 1998, eq. 2.6).
  constexpr double eps = 2.0 / 13.0;
  for (int s : {2, 3, 4, 5, 10, 20, 50, 100, 300}) {
    const double closed = 2.0 / 3.0 * (s * s - 1.0) * (1 - 2 * eps / 15);
    EXPECT_NEAR(rkc::make_scheme(s).stability_bound / closed, 1.0, 5e-3) << "s = " << s;
  }
  EXPECT_THROW((void)rkc::make_scheme(1), std::invalid_argument);
  EXPECT_THROW((void)rkc::make_scheme(rkc::max_stages + 1), std::invalid_argument);
}

TEST(Rkc, AmplificationIsBoundedOnTheWholeStabilityInterval) {
  for (int s : {2, 3, 7, 16, 60}) {
    const auto c = rkc::make_scheme(s);
    double largest = 0;
    for (int i = 0; i <= 4000; ++i) largest = std::max(largest, std::abs(amplification(c, c.stability_bound * i / 4000.0)));
    EXPECT_LE(largest, 1 + 1e-10) << "s = " << s;
    // Consistent with e^{−z} to second order near 0: R(z) = 1 − z + z²/2 + O(z³).
    const double z = 1e-3;
    EXPECT_NEAR(amplification(c, z), 1 - z + z * z / 2, 1e-8) << "s = " << s;
    // Beyond the interval (argument of T_s well below −1) the step amplifies.
    EXPECT_GT(std::abs(amplification(c, 1.5 * c.stability_bound)), 1.0) << "s = " << s;
  }
}

TEST(Rkc, StageRuleIsTheFewestStagesThatAreStable) {
  EXPECT_EQ(rkc::stages_for(0.0), 2);
  for (double hr : {0.5, 1.96, 1.97, 10.0, 64.7, 100.0, 1e3, 1e4, 1e5}) {
    const int s = rkc::stages_for(hr);
    EXPECT_GE(rkc::make_scheme(s).stability_bound, hr) << hr;
    if (s > 2) {
      EXPECT_LT(rkc::make_scheme(s - 1).stability_bound, hr) << hr;
    }
  }
  EXPECT_THROW((void)rkc::stages_for(-1.0), std::invalid_argument);
}

// y' = −y², y(0) = 1: y(t) = 1/(1 + t).
double integrate_riccati(int steps, int s) {
  const auto c = rkc::make_scheme(s);
  const auto f = [](const Eigen::VectorXd& x, Eigen::VectorXd& fx) { fx = -x.cwiseProduct(x); };
  Eigen::VectorXd y = Eigen::VectorXd::Constant(1, 1.0), f0(1), next;
  const double h = 1.0 / steps;
  for (int i = 0; i < steps; ++i) {
    f(y, f0);
    rkc::step(c, f, y, f0, h, next);
    y = next;
  }
  return y[0];
}

TEST(Rkc, SecondOrderAndAThirdOrderErrorEstimate) {
  for (int s : {2, 5, 12}) {
    const double e1 = std::abs(integrate_riccati(20, s) - 0.5), e2 = std::abs(integrate_riccati(40, s) - 0.5);
    EXPECT_NEAR(e1 / e2, 4.0, 0.4) << "s = " << s;
  }
  // One step from y = 1: the estimate tracks the true local error, both O(h³).
  const auto c = rkc::make_scheme(6);
  const auto f = [](const Eigen::VectorXd& x, Eigen::VectorXd& fx) { fx = -x.cwiseProduct(x); };
  double previous = 0;
  for (double h : {0.04, 0.02, 0.01}) {
    Eigen::VectorXd y = Eigen::VectorXd::Constant(1, 1.0), f0(1), f1(1), y1;
    f(y, f0);
    rkc::step(c, f, y, f0, h, y1);
    f(y1, f1);
    const Eigen::VectorXd error = rkc::error_estimate(y, y1, f0, f1, h);
    const double estimate = std::abs(error.sum());
    const double truth = std::abs(y1[0] - 1 / (1 + h));
    EXPECT_GT(estimate, 0.3 * truth);
    EXPECT_LT(estimate, 30 * truth);
    if (previous > 0) {
      EXPECT_NEAR(previous / estimate, 8.0, 1.0) << "h = " << h;
    }
    previous = estimate;
  }
}

TEST(Rkc, CrossesAStiffLinearSystemWithStepsFarBeyondTheExplicitLimit) {
  // y' = −diag(λ) y with λ from 0.1 to 1000; h = 0.5 is 250× Heun's limit 2/1000.
  const Eigen::Index n = 50;
  Eigen::VectorXd lambda(n);
  for (Eigen::Index i = 0; i < n; ++i) lambda[i] = 0.1 * std::pow(1e4, static_cast<double>(i) / (n - 1));
  const auto f = [&](const Eigen::VectorXd& x, Eigen::VectorXd& fx) { fx = -lambda.cwiseProduct(x); };
  const double h = 0.5;
  const auto c = rkc::make_scheme(rkc::stages_for(h * 1000));
  EXPECT_LE(c.stages, 30); // ~√(500/0.65) + 1 evaluations per step instead of 250 Heun steps
  Eigen::VectorXd y = Eigen::VectorXd::Ones(n), f0(n), next;
  for (int i = 0; i < 20; ++i) {
    f(y, f0);
    rkc::step(c, f, y, f0, h, next);
    y = next;
    EXPECT_LE(y.cwiseAbs().maxCoeff(), 1 + 1e-12);
  }
  // The slow mode follows e^{−0.1 t} to second order. The stiff ones decay, each by its scalar
  // amplification per step: RKC damps them only weakly (|R| close to 1 near −β), which is why
  // the step size stays under error control.
  EXPECT_NEAR(y[0], std::exp(-0.1 * 10), 1e-4);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double r = std::abs(amplification(c, h * lambda[i]));
    EXPECT_LT(r, 1.0) << "lambda = " << lambda[i];
    EXPECT_NEAR(std::abs(y[i]), std::pow(r, 20), 1e-12 + 1e-9 * std::pow(r, 20)) << "lambda = " << lambda[i];
  }
}

} // namespace
