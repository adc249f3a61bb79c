// The streaming empirical risk: value against a direct Eigen recomputation, gradient against
// central finite differences for all four activations (f64 and f32 tokens), determinism
// across thread counts, and the test-risk estimate.
#include "slr/erm/loss.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <set>
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

// The streaming kernel aligns its vector loops to where the token rows start; the sums must not
// depend on it. The same sequences are generated into arrays placed at different offsets from a
// cache line (heap blocks of this size follow the allocations made before them).
TEST(EmpiricalRisk, IdenticalForAnyTokenAlignment) {
  const auto problem = make_problem(model::activation_kind::softmax);
  const std::size_t D = 48;
  const auto t = erm::teacher::draw(D, 4);
  const Eigen::VectorXd w = erm::initial_weights(t, erm::initialisation::informed, 0.3, 4);
  for (const auto storage : {erm::precision::f64, erm::precision::f32}) {
    std::vector<std::unique_ptr<erm::sequence_data>> copies;
    std::vector<std::vector<char>> spacers;
    std::set<std::uintptr_t> offsets;
    for (std::size_t shift = 0; shift < 16 && offsets.size() < 4; ++shift) {
      spacers.emplace_back(16 * shift + 8);
      copies.push_back(std::make_unique<erm::sequence_data>(erm::sequence_data::generate(
          problem, t, 41, 4, model::stream_purpose::training_data, storage, 1)));
      const auto* tokens = storage == erm::precision::f64 ? static_cast<const void*>(copies.back()->tokens_f64())
                                                          : static_cast<const void*>(copies.back()->tokens_f32());
      offsets.insert(reinterpret_cast<std::uintptr_t>(tokens) % 64);
    }
    if (offsets.size() < 2) GTEST_SKIP() << "the allocator gave every copy the same alignment";
    Eigen::VectorXd g0, g;
    const erm::empirical_risk first(*copies.front(), problem.activation, 1, 1, 1);
    const double f0 = first.evaluate(w, g0).objective;
    for (const auto& copy : copies) {
      const erm::empirical_risk risk(*copy, problem.activation, 1, 1, 2);
      EXPECT_EQ(risk.evaluate(w, g).objective, f0);
      EXPECT_EQ(g, g0);
      EXPECT_EQ(risk.squared_errors(w).sum, first.squared_errors(w).sum);
    }
  }
}

// The gradient against the direct formula ∇_k = Σ_μ r_μ Σ_l (Jᵀz)_l x_l/√D + r_k k (and the same
// with σ_l for v), for dimensions with and without a remainder modulo the vector width, odd
// numbers of sequences and variable lengths (which take the unfused path).
TEST(EmpiricalRisk, GradientMatchesDirectSum) {
  for (const char* lengths : {"3", "2", "4", "1:0.3,3:0.4,6:0.3"})
    for (const std::size_t D : {8u, 13u, 36u, 64u, 101u})
      for (const auto storage : {erm::precision::f64, erm::precision::f32}) {
        const auto problem = make_problem(model::activation_kind::erf, lengths);
        const auto t = erm::teacher::draw(D, 7);
        const auto data =
            erm::sequence_data::generate(problem, t, 37, 7, model::stream_purpose::training_data, storage, 1);
        const Eigen::VectorXd w = erm::initial_weights(t, erm::initialisation::informed, 0.5, 7);
        const auto Di = static_cast<Eigen::Index>(D);
        const auto act = model::make_activation(problem.activation);
        Eigen::VectorXd direct = Eigen::VectorXd::Zero(2 * Di);
        for (std::size_t mu = 0; mu < data.size(); ++mu) {
          const auto L = static_cast<Eigen::Index>(data.length(mu));
          Eigen::MatrixXd X(L, Di);
          for (Eigen::Index l = 0; l < L; ++l) X.row(l) = data.token(mu, static_cast<std::size_t>(l)).transpose();
          const Eigen::VectorXd chi = X * w.head(Di) / std::sqrt(static_cast<double>(D));
          const Eigen::VectorXd z = X * w.tail(Di) / std::sqrt(static_cast<double>(D));
          Eigen::VectorXd sigma(L), jt(L);
          act->vector_jacobian({chi.data(), static_cast<std::size_t>(L)}, {z.data(), static_cast<std::size_t>(L)},
                               {sigma.data(), static_cast<std::size_t>(L)}, {jt.data(), static_cast<std::size_t>(L)});
          const double r = sigma.dot(z) - data.label(mu);
          direct.head(Di) += r * X.transpose() * jt / std::sqrt(static_cast<double>(D));
          direct.tail(Di) += r * X.transpose() * sigma / std::sqrt(static_cast<double>(D));
        }
        direct.head(Di) += 0.3 * w.head(Di);
        direct.tail(Di) += 0.7 * w.tail(Di);
        const erm::empirical_risk risk(data, problem.activation, 0.3, 0.7, 2);
        Eigen::VectorXd gradient;
        const auto value = risk.evaluate(w, gradient);
        EXPECT_NEAR(value.objective, direct_objective(data, problem, w, 0.3, 0.7), 1e-12 * std::abs(value.objective))
            << "L=" << lengths << " D=" << D;
        EXPECT_LT((gradient - direct).cwiseAbs().maxCoeff(), 1e-12 * direct.cwiseAbs().maxCoeff())
            << "L=" << lengths << " D=" << D;
      }
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
