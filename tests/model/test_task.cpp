// The exact task samplers, posteriors, length laws and the counter-based generator.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "slr/model/order_parameters.hpp"
#include "slr/model/parallel.hpp"
#include "slr/model/random.hpp"
#include "slr/model/task.hpp"
#include "slr/model/teacher_fields.hpp"

namespace {
using namespace slr::model;

TEST(CounterRng, SameAddressSameNumbersAndStandardMoments) {
  counter_rng a(7, stream_purpose::teacher_fields, 42), b(7, stream_purpose::teacher_fields, 42);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.normal(), b.normal());
  counter_rng c(7, stream_purpose::teacher_fields, 43);
  EXPECT_NE(a.normal(), c.normal());
  double sum = 0, sum_sq = 0, u_sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    counter_rng r(1, stream_purpose::student_noise, static_cast<std::uint64_t>(i));
    const double x = r.normal();
    sum += x;
    sum_sq += x * x;
    const double u = r.uniform();
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    u_sum += u;
  }
  EXPECT_NEAR(sum / n, 0.0, 5.0 / std::sqrt(n));
  EXPECT_NEAR(sum_sq / n, 1.0, 5.0 * std::sqrt(2.0 / n));
  EXPECT_NEAR(u_sum / n, 0.5, 5.0 * std::sqrt(1.0 / 12 / n));
}

TEST(Task, RejectsBadNu) {
  EXPECT_THROW(task(task_kind::spiked, -1.0), std::invalid_argument);
  EXPECT_THROW(task(task_kind::spiked, std::numeric_limits<double>::infinity()), std::invalid_argument);
  EXPECT_THROW(task(task_kind::max, std::nan("")), std::invalid_argument);
  EXPECT_NO_THROW(task(task_kind::max, std::numeric_limits<double>::infinity()));
  EXPECT_THROW((void)task::parse_kind("spike"), std::invalid_argument);
}

TEST(Task, SpikedShiftsOnlyTheHiddenLocation) {
  const task spiked(task_kind::spiked, 4.0);
  const int n = 100000;
  double at_location = 0, elsewhere = 0;
  std::vector<int> counts(3, 0);
  for (int i = 0; i < n; ++i) {
    counter_rng rng(3, stream_purpose::teacher_fields, static_cast<std::uint64_t>(i));
    double chi[3];
    const auto eps = spiked.sample(chi, rng);
    ++counts[eps];
    at_location += chi[eps];
    for (std::size_t l = 0; l < 3; ++l)
      if (l != eps) elsewhere += chi[l];
  }
  EXPECT_NEAR(at_location / n, 2.0, 5.0 / std::sqrt(n));
  EXPECT_NEAR(elsewhere / (2.0 * n), 0.0, 5.0 / std::sqrt(2.0 * n));
  for (int c : counts) EXPECT_NEAR(c / double(n), 1.0 / 3, 5.0 * std::sqrt(2.0 / 9 / n));
}

TEST(Task, MaxSamplerAgreesWithItsPosterior) {
  // P(ε = argmax χ*) estimated from draws equals E[p_argmax] computed from the posterior.
  const task max_task(task_kind::max, 2.0);
  const int n = 100000;
  double hits = 0, expected = 0;
  for (int i = 0; i < n; ++i) {
    counter_rng rng(5, stream_purpose::teacher_fields, static_cast<std::uint64_t>(i));
    double chi[3], p[3];
    const auto eps = max_task.sample(chi, rng);
    max_task.posterior(chi, p);
    const auto top = static_cast<std::size_t>(std::max_element(chi, chi + 3) - chi);
    hits += eps == top;
    expected += p[top];
  }
  EXPECT_NEAR(hits / n, expected / n, 5.0 * std::sqrt(0.25 / n));
}

TEST(Task, HardMaxIsArgmaxAndHasNoScore) {
  const task hard(task_kind::max, std::numeric_limits<double>::infinity());
  counter_rng rng(1, stream_purpose::teacher_fields, 0);
  double chi[4], p[4];
  const auto eps = hard.sample(chi, rng);
  EXPECT_EQ(eps, static_cast<std::size_t>(std::max_element(chi, chi + 4) - chi));
  hard.posterior(chi, p);
  EXPECT_EQ(p[eps], 1.0);
  double score[4];
  EXPECT_THROW(hard.tilt_score(eps, chi, score), std::logic_error);
}

TEST(Task, TiltScoreIsTheDerivativeOfLogG) {
  const task max_task(task_kind::max, 1.5);
  const double chi[3] = {0.2, -0.4, 1.1};
  double score[3];
  max_task.tilt_score(1, chi, score);
  // log g = log L + ν χ_ε − log Σ e^{νχ}.
  auto log_g = [&](const double* x) {
    double z = 0;
    for (int l = 0; l < 3; ++l) z += std::exp(1.5 * x[l]);
    return std::log(3.0) + 1.5 * x[1] - std::log(z);
  };
  for (int m = 0; m < 3; ++m) {
    double plus[3] = {chi[0], chi[1], chi[2]}, minus[3] = {chi[0], chi[1], chi[2]};
    plus[m] += 1e-6;
    minus[m] -= 1e-6;
    EXPECT_NEAR(score[m], (log_g(plus) - log_g(minus)) / 2e-6, 1e-7);
  }
}

TEST(LengthLaw, ParsesValidatesAndPrintsCanonically) {
  const auto law = length_law::parse("3:0.75,1:0.25");
  EXPECT_EQ(law.to_string(), "1:0.25,3:0.75");
  EXPECT_DOUBLE_EQ(law.mean(), 2.5);
  EXPECT_EQ(law.max_length(), 3u);
  EXPECT_EQ(length_law::parse("4"), length_law::fixed(4));
  EXPECT_THROW((void)length_law::parse("0"), std::invalid_argument);
  EXPECT_THROW((void)length_law::parse("1:0.5,2:0.4"), std::invalid_argument);
  EXPECT_THROW((void)length_law::parse("1:0.5,1:0.5"), std::invalid_argument);
  EXPECT_THROW((void)length_law::parse("x"), std::invalid_argument);
  EXPECT_THROW((void)length_law::parse("2:abc"), std::invalid_argument);
}

TEST(TeacherFields, StratifiedAndIndependentOfThreadCount) {
  const task spiked(task_kind::spiked, 1.0);
  const auto law = length_law::parse("1:0.25,3:0.75");
  const auto one = draw_teacher_fields(spiked, law, 10000, 11, 1);
  const auto two = draw_teacher_fields(spiked, law, 10000, 11, 2);
  EXPECT_EQ(one.chi_star, two.chi_star);
  EXPECT_EQ(one.location, two.location);
  double total_weight = 0, weight_short = 0;
  for (std::size_t s = 0; s < one.size(); ++s) {
    total_weight += one.weight[s];
    if (one.length[s] == 1) weight_short += one.weight[s];
  }
  EXPECT_NEAR(total_weight, 1.0, 1e-12);
  EXPECT_NEAR(weight_short, 0.25, 1e-12);
}

TEST(TeacherFields, EveryStrideThSamplePackedWithItsWeights) {
  const task spiked(task_kind::spiked, 1.0);
  const auto law = length_law::parse("1:0.25,3:0.75");
  const auto all = draw_teacher_fields(spiked, law, 1001, 5, 1);
  for (std::size_t stride : {1U, 3U, 7U}) {
    const auto sub = all.every(stride);
    ASSERT_EQ(sub.size(), (all.size() + stride - 1) / stride);
    EXPECT_EQ(sub.max_length, all.max_length);
    double weight_total = 0;
    for (std::size_t i = 0; i < sub.size(); ++i) {
      const std::size_t s = i * stride;
      EXPECT_EQ(sub.length[i], all.length[s]);
      EXPECT_EQ(sub.location[i], all.location[s]);
      EXPECT_EQ(sub.stratum[i], all.stratum[s]);
      EXPECT_EQ(sub.weight[i], all.weight[s]);
      for (std::size_t l = 0; l < all.max_length; ++l) {
        EXPECT_EQ(sub.chi_star[i * all.max_length + l], all.chi_star[s * all.max_length + l]);
        EXPECT_EQ(sub.z_star[i * all.max_length + l], all.z_star[s * all.max_length + l]);
        EXPECT_EQ(sub.posterior[i * all.max_length + l], all.posterior[s * all.max_length + l]);
      }
      weight_total += sub.weight[i];
    }
    // The scale that makes the subsample's weights sum to 1.
    EXPECT_NEAR(weight_total * all.strided_weight_scale(stride), 1.0, 1e-12);
    const auto rows = every_row(all.z_star, all.max_length, stride);
    EXPECT_EQ(rows, sub.z_star);
  }
}

TEST(ChunkedReduce, BitIdenticalForAnyThreadCount) {
  auto sum = [](unsigned threads) {
    return chunked_reduce(100001, 333, threads, 0.0, [](std::size_t b, std::size_t e, double& acc) {
      for (std::size_t i = b; i < e; ++i) acc += std::sin(static_cast<double>(i)) * 1e-3;
    });
  };
  const double serial = sum(1);
  EXPECT_EQ(serial, sum(2));
  EXPECT_EQ(serial, sum(7));
}

TEST(OrderParameters, ResidualAndAdmissibility) {
  order_parameters op;
  op.m_kk = 0.5, op.m_kv = 0.1, op.m_vk = -0.2, op.m_vv = 0.8;
  op.q_kk = 1.0, op.q_kv = 0.05, op.q_vv = 1.0;
  const Eigen::Matrix2d R = op.residual();
  EXPECT_NEAR(R(0, 0), 1.0 - 0.25 - 0.01, 1e-15);
  EXPECT_NEAR(R(0, 1), 0.05 - (0.5 * -0.2 + 0.1 * 0.8), 1e-15);
  EXPECT_NEAR(R(1, 1), 1.0 - 0.04 - 0.64, 1e-15);
  EXPECT_TRUE(op.is_admissible());
  EXPECT_FALSE(op.is_on_manifold());
  op.q_vv = 0.5; // below m_vk² + m_vv²
  EXPECT_FALSE(op.is_admissible());
  EXPECT_THROW((void)psd_sqrt(op.residual()), std::invalid_argument);
  const Eigen::Matrix2d root = psd_sqrt(R);
  EXPECT_TRUE((root * root).isApprox(R, 1e-12));
}
} // namespace
