// Finite-D data: the teacher's normalisation, the task samplers' teacher-field statistics
// (docs/theory.md §1), label noise, variable lengths, f32 rounding and determinism.
#include "slr/erm/data.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace {
using namespace slr;

model::problem make_problem(model::task_kind kind, double nu, const char* lengths = "3", double delta = 0.0) {
  model::problem p;
  p.task = model::task(kind, nu);
  p.lengths = model::length_law::parse(lengths);
  p.delta = delta;
  return p;
}

// Teacher fields χ*_l = k*·x_l/√D, z*_l = v*·x_l/√D of a stored token.
double field(const erm::sequence_data& data, const Eigen::VectorXd& teacher_vector, std::size_t mu, std::size_t l) {
  return data.token(mu, l).dot(teacher_vector) / std::sqrt(static_cast<double>(data.dimension()));
}

TEST(Teacher, NormalisedAndOrthogonal) {
  const auto t = erm::teacher::draw(257, 3);
  EXPECT_NEAR(t.k_star.squaredNorm(), 257.0, 1e-9);
  EXPECT_NEAR(t.v_star.squaredNorm(), 257.0, 1e-9);
  EXPECT_NEAR(t.k_star.dot(t.v_star), 0.0, 1e-9);
  EXPECT_THROW((void)erm::teacher::draw(1, 3), std::invalid_argument);
}

TEST(Data, SpikedTeacherFields) {
  // χ*_ε ~ N(√ν, 1), χ*_l ~ N(0, 1) for l ≠ ε, y = z*_ε ~ N(0, 1) (Δ = 0), ε uniform.
  const double nu = 4.0;
  const auto problem = make_problem(model::task_kind::spiked, nu);
  const auto t = erm::teacher::draw(64, 11);
  const std::size_t N = 6000;
  const auto data = erm::sequence_data::generate(problem, t, N, 11, model::stream_purpose::training_data,
                                                 erm::precision::f64, 2);
  double at_location = 0, elsewhere = 0, label_mean = 0, label_square = 0;
  std::size_t counts[3] = {0, 0, 0};
  for (std::size_t mu = 0; mu < N; ++mu) {
    const auto e = data.location(mu);
    ++counts[e];
    for (std::size_t l = 0; l < 3; ++l) (l == e ? at_location : elsewhere) += field(data, t.k_star, mu, l);
    EXPECT_NEAR(data.label(mu), field(data, t.v_star, mu, e), 1e-12);
    label_mean += data.label(mu);
    label_square += data.label(mu) * data.label(mu);
  }
  const double n = static_cast<double>(N);
  EXPECT_NEAR(at_location / n, std::sqrt(nu), 5 / std::sqrt(n));
  EXPECT_NEAR(elsewhere / (2 * n), 0.0, 5 / std::sqrt(2 * n));
  EXPECT_NEAR(label_mean / n, 0.0, 5 / std::sqrt(n));
  EXPECT_NEAR(label_square / n, 1.0, 5 * std::sqrt(2 / n));
  for (auto c : counts) EXPECT_NEAR(static_cast<double>(c) / n, 1.0 / 3, 5 * std::sqrt(2.0 / 9 / n));
}

TEST(Data, MaxHardIsArgmaxWithUntouchedMarginal) {
  // ν = ∞: ε = argmax χ*, and the χ* marginal is N(0, I): E[max of 3] = 3/(2√π).
  const auto problem = make_problem(model::task_kind::max, std::numeric_limits<double>::infinity());
  const auto t = erm::teacher::draw(48, 5);
  const std::size_t N = 4000;
  const auto data =
      erm::sequence_data::generate(problem, t, N, 5, model::stream_purpose::test_data, erm::precision::f64, 1);
  double top = 0, all = 0, square = 0;
  for (std::size_t mu = 0; mu < N; ++mu) {
    double best = -1e300;
    std::size_t arg = 0;
    for (std::size_t l = 0; l < 3; ++l) {
      const double c = field(data, t.k_star, mu, l);
      all += c;
      square += c * c;
      if (c > best) best = c, arg = l;
    }
    ASSERT_EQ(data.location(mu), arg);
    top += best;
  }
  const double n = static_cast<double>(N);
  EXPECT_NEAR(top / n, 1.5 / std::sqrt(std::numbers::pi), 5 * 0.75 / std::sqrt(n)); // sd(max of 3) ≈ 0.75
  EXPECT_NEAR(all / (3 * n), 0.0, 5 / std::sqrt(3 * n));
  EXPECT_NEAR(square / (3 * n), 1.0, 5 * std::sqrt(2 / (3 * n)));
}

TEST(Data, MaxFiniteNuSamplesThePosterior) {
  // ε | χ* ~ softmax(νχ*): E[χ*_ε] equals E[Σ_l p_l χ*_l] (Rao–Blackwell), compared on the same
  // sequences so that only the location draw differs.
  const double nu = 2.0;
  const auto problem = make_problem(model::task_kind::max, nu);
  const auto t = erm::teacher::draw(40, 8);
  const std::size_t N = 8000;
  const auto data =
      erm::sequence_data::generate(problem, t, N, 8, model::stream_purpose::training_data, erm::precision::f64, 2);
  double sampled = 0, expected = 0, variance = 0;
  for (std::size_t mu = 0; mu < N; ++mu) {
    double chi[3], p[3];
    for (std::size_t l = 0; l < 3; ++l) chi[l] = field(data, t.k_star, mu, l);
    problem.task.posterior(chi, p);
    double mean = 0, second = 0;
    for (std::size_t l = 0; l < 3; ++l) mean += p[l] * chi[l], second += p[l] * chi[l] * chi[l];
    sampled += chi[data.location(mu)];
    expected += mean;
    variance += second - mean * mean;
  }
  const double n = static_cast<double>(N);
  EXPECT_NEAR(sampled / n, expected / n, 5 * std::sqrt(variance) / n); // Σ of per-sequence variances
  EXPECT_GT(sampled / n, 0.5); // the tilt is really there (E[χ*_ε] ≈ 1.2 at ν = 2)
}

TEST(Data, LabelNoiseVariableLengthsAndPadding) {
  const double delta = 0.5;
  const auto problem = make_problem(model::task_kind::spiked, 1.0, "1:0.25,3:0.75", delta);
  const auto t = erm::teacher::draw(32, 2);
  const std::size_t N = 4000;
  const auto data =
      erm::sequence_data::generate(problem, t, N, 2, model::stream_purpose::training_data, erm::precision::f64, 1);
  EXPECT_EQ(data.max_length(), 3U);
  double noise_square = 0;
  std::size_t ones = 0;
  for (std::size_t mu = 0; mu < N; ++mu) {
    const auto L = data.length(mu);
    ASSERT_TRUE(L == 1 || L == 3);
    ASSERT_LT(data.location(mu), L);
    ones += L == 1 ? 1 : 0;
    for (std::size_t l = L; l < 3; ++l) EXPECT_EQ(data.token(mu, l).squaredNorm(), 0.0);
    const double noise = data.label(mu) - field(data, t.v_star, mu, data.location(mu));
    noise_square += noise * noise;
  }
  const double n = static_cast<double>(N);
  EXPECT_NEAR(static_cast<double>(ones) / n, 0.25, 5 * std::sqrt(0.25 * 0.75 / n));
  EXPECT_NEAR(noise_square / n, delta * delta, 5 * delta * delta * std::sqrt(2 / n));
}

TEST(Data, DeterministicAcrossThreadsRangesAndPrecision) {
  const auto problem = make_problem(model::task_kind::max, 1.5, "2:0.5,4:0.5", 0.1);
  const auto t = erm::teacher::draw(50, 9);
  const auto one = erm::sequence_data::generate(problem, t, 100, 9, model::stream_purpose::training_data,
                                                erm::precision::f64, 1);
  const auto two = erm::sequence_data::generate(problem, t, 100, 9, model::stream_purpose::training_data,
                                                erm::precision::f64, 2);
  const auto tail = erm::sequence_data::generate(problem, t, 30, 9, model::stream_purpose::training_data,
                                                 erm::precision::f64, 3, 70);
  const auto single = erm::sequence_data::generate(problem, t, 100, 9, model::stream_purpose::training_data,
                                                   erm::precision::f32, 2);
  for (std::size_t mu = 0; mu < 100; ++mu) {
    ASSERT_EQ(one.label(mu), two.label(mu));
    ASSERT_EQ(one.length(mu), single.length(mu));
    for (std::size_t l = 0; l < 4; ++l) {
      ASSERT_EQ(one.token(mu, l), two.token(mu, l));
      ASSERT_EQ(one.token(mu, l).cast<float>().cast<double>(), single.token(mu, l));
      if (mu >= 70) {
        ASSERT_EQ(one.token(mu, l), tail.token(mu - 70, l));
      }
    }
  }
  EXPECT_NE(one.label(0), erm::sequence_data::generate(problem, t, 1, 10, model::stream_purpose::training_data,
                                                      erm::precision::f64).label(0));
}

TEST(Data, BadInput) {
  const auto problem = make_problem(model::task_kind::spiked, 1.0);
  const auto t = erm::teacher::draw(8, 1);
  EXPECT_THROW((void)erm::sequence_data::generate(problem, t, 0, 1, model::stream_purpose::training_data,
                                                  erm::precision::f64),
               std::invalid_argument);
  EXPECT_THROW((void)erm::parse_precision("f16"), std::invalid_argument);
}
} // namespace
