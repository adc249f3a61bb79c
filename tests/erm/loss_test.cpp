// The streaming empirical risk: value against a direct Eigen recomputation, gradient against
// central finite differences for all four activations (f64 and f32 tokens), determinism
// across thread counts, and the test-risk estimate.
#include "slr/erm/loss.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "slr/erm/trainer.hpp"

namespace {
using namespace slr;

model::problem make_problem(model::activation_kind kind, const char* lengths = "3") {
  model::problem p;
  p.task = model::task(model::task_kind::spiked, 1.0);
  p.lengths = model::length_law::parse(lengths);
  p.delta = 0.2;
  p.activation.kind = kind;
  p.activation.erf_offset = kind == model::activation_kind::erf ? 0.3 : 0.0;
  return p;
}

// F(w) computed directly: per sequence the L×D token matrix times k and v, σ from the model.
double direct_objective(const erm::sequence_data& data, const model::problem& problem, const Eigen::VectorXd& w,
                        double r_k, double r_v) {
  const auto D = static_cast<Eigen::Index>(data.dimension());
  const auto act = model::make_activation(problem.activation);
  double total = 0;
  for (std::size_t mu = 0; mu < data.size(); ++mu) {
    const auto L = static_cast<Eigen::Index>(data.length(mu));
    Eigen::MatrixXd X(L, D);
    for (Eigen::Index l = 0; l < L; ++l) X.row(l) = data.token(mu, static_cast<std::size_t>(l)).transpose();
    const Eigen::VectorXd chi = X * w.head(D) / std::sqrt(static_cast<double>(D));
    const Eigen::VectorXd z = X * w.tail(D) / std::sqrt(static_cast<double>(D));
    Eigen::VectorXd sigma(L);
    act->evaluate({chi.data(), static_cast<std::size_t>(L)}, {sigma.data(), static_cast<std::size_t>(L)});
    const double r = sigma.dot(z) - data.label(mu);
    total += 0.5 * r * r;
  }
  return total + 0.5 * r_k * w.head(D).squaredNorm() + 0.5 * r_v * w.tail(D).squaredNorm();
}

struct gradient_case {
  model::activation_kind kind;
  erm::precision storage;
  const char* lengths;
};

class GradientCheck : public ::testing::TestWithParam<gradient_case> {};

TEST_P(GradientCheck, MatchesFiniteDifferences) {
  const auto param = GetParam();
  const auto problem = make_problem(param.kind, param.lengths);
  const std::size_t D = 40;
  const auto t = erm::teacher::draw(D, 21);
  const auto data =
      erm::sequence_data::generate(problem, t, 60, 21, model::stream_purpose::training_data, param.storage, 1);
  const double r_k = 0.3, r_v = 0.7;
  const erm::empirical_risk risk(data, problem.activation, r_k, r_v, 2);
  // Moderate weights so that every activation is in its curved regime.
  const Eigen::VectorXd w = erm::initial_weights(t, erm::initialisation::informed, 0.6, 4);
  Eigen::VectorXd gradient;
  const auto value = risk.evaluate(w, gradient);
  EXPECT_NEAR(value.objective, direct_objective(data, problem, w, r_k, r_v), 1e-10 * std::abs(value.objective));
  EXPECT_NEAR(risk.evaluate(w).objective, value.objective, 1e-12 * std::abs(value.objective));
  double worst = 0;
  const double h = 1e-5;
  for (Eigen::Index i = 0; i < w.size(); ++i) {
    Eigen::VectorXd plus = w, minus = w;
    plus[i] += h;
    minus[i] -= h;
    const double fd = (risk.evaluate(plus).objective - risk.evaluate(minus).objective) / (2 * h);
    worst = std::max(worst, std::abs(fd - gradient[i]));
  }
  const double scale = gradient.cwiseAbs().maxCoeff();
  RecordProperty("max_abs_fd_error_relative", std::to_string(worst / scale));
  std::printf("activation %d %s L=%s: max |FD - analytic| / max|grad| = %.2e\n", static_cast<int>(param.kind),
              param.storage == erm::precision::f64 ? "f64" : "f32", param.lengths, worst / scale);
  EXPECT_LT(worst / scale, 1e-7);
}

INSTANTIATE_TEST_SUITE_P(
    AllActivations, GradientCheck,
    ::testing::Values(gradient_case{model::activation_kind::softmax, erm::precision::f64, "3"},
                      gradient_case{model::activation_kind::linear, erm::precision::f64, "3"},
                      gradient_case{model::activation_kind::erf, erm::precision::f64, "3"},
                      gradient_case{model::activation_kind::softplus_kernel, erm::precision::f64, "3"},
                      gradient_case{model::activation_kind::softmax, erm::precision::f32, "3"},
                      gradient_case{model::activation_kind::erf, erm::precision::f32, "3"},
                      gradient_case{model::activation_kind::softmax, erm::precision::f64, "1:0.3,2:0.2,6:0.5"},
                      gradient_case{model::activation_kind::softplus_kernel, erm::precision::f32, "1:0.5,5:0.5"}));

TEST(EmpiricalRisk, IdenticalForAnyThreadCount) {
  const auto problem = make_problem(model::activation_kind::softmax);
  const auto t = erm::teacher::draw(33, 2);
  const auto data =
      erm::sequence_data::generate(problem, t, 3000, 2, model::stream_purpose::training_data, erm::precision::f64, 2);
  const Eigen::VectorXd w = erm::initial_weights(t, erm::initialisation::informed, 0.3, 2);
  Eigen::VectorXd g1, g3;
  const erm::empirical_risk one(data, problem.activation, 1, 1, 1), three(data, problem.activation, 1, 1, 3);
  EXPECT_EQ(one.evaluate(w, g1).objective, three.evaluate(w, g3).objective);
  EXPECT_EQ(g1, g3);
  EXPECT_EQ(one.squared_errors(w).sum, three.squared_errors(w).sum);
}

TEST(EmpiricalRisk, FreshTestRiskOfTheTeacher) {
  // Softmax at k = √ν k*, v = v* is the Bayes predictor (docs/theory.md §3, Prop 4.2 check);
  // its risk is Δ² + 1 − E[Σp²] = 0.4814 + Δ² for spiked ν = 1, L = 3 (§7.1; 0.4814 ± 0.0003).
  auto problem = make_problem(model::activation_kind::softmax);
  problem.delta = 0.0;
  const auto t = erm::teacher::draw(64, 6);
  Eigen::VectorXd w(128);
  w << t.k_star, t.v_star;
  const auto risk1 = erm::fresh_test_risk(problem, t, w, 20000, 6, erm::precision::f64, 1);
  const auto risk2 = erm::fresh_test_risk(problem, t, w, 20000, 6, erm::precision::f64, 2);
  EXPECT_EQ(risk1.mean, risk2.mean);
  EXPECT_NEAR(risk1.mean, 0.4814, 4 * risk1.stderr + 0.0003);
  EXPECT_GT(risk1.stderr, 0.002);
  EXPECT_LT(risk1.stderr, 0.01);
}

TEST(EmpiricalRisk, BadInput) {
  const auto problem = make_problem(model::activation_kind::linear);
  const auto t = erm::teacher::draw(10, 1);
  const auto data =
      erm::sequence_data::generate(problem, t, 5, 1, model::stream_purpose::training_data, erm::precision::f64);
  EXPECT_THROW(erm::empirical_risk(data, problem.activation, -1, 0), std::invalid_argument);
  const erm::empirical_risk risk(data, problem.activation, 0, 0);
  Eigen::VectorXd wrong(7), gradient;
  EXPECT_THROW((void)risk.evaluate(wrong, gradient), std::invalid_argument);
}
} // namespace
