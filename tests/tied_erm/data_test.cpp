#include "slr/tied_erm/data.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Eigenvalues>

#include "slr/erm/normals.hpp"

namespace {

using slr::model::stream_purpose;
using slr::tied_erm::dataset;
using slr::tied_erm::teacher;

struct moments {
  double mean = 0, var = 0;
  std::size_t n = 0;
};
moments sample_moments(const std::vector<double>& v) {
  moments m;
  m.n = v.size();
  for (double x : v) m.mean += x;
  m.mean /= static_cast<double>(m.n);
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= static_cast<double>(m.n - 1);
  return m;
}

TEST(TiedErmData, TeacherIsTheNormalisedGramOfItsAddressedColumns) {
  const std::size_t d = 30;
  const auto t = teacher::draw(d, 0.5, 11);
  ASSERT_EQ(t.rank, 15u);
  Eigen::MatrixXd W(30, 15);
  for (int j = 0; j < 15; ++j)
    slr::erm::normal_stream(11, stream_purpose::teacher_weights, 0, static_cast<std::uint32_t>(j))
        .fill({W.col(j).data(), d});
  const Eigen::MatrixXd expected = W * W.transpose() / std::sqrt(15.0 * 30.0);
  EXPECT_LT((t.S - expected).norm(), 1e-13 * expected.norm());
  EXPECT_EQ((t.S - t.S.transpose()).norm(), 0.0);
  EXPECT_GE(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(t.S).eigenvalues().minCoeff(), -1e-12);
  EXPECT_EQ(slr::tied_erm::target_rank(0.75, 60), 45u);
  EXPECT_EQ(slr::tied_erm::target_rank(0.01, 10), 1u);
}

TEST(TiedErmData, TeacherSecondMomentHasItsExactFiniteDMean) {
  // E (1/d) Tr (W Wᵀ)²/(r d) = (d + r + 1)/d exactly for Gaussian W (d×r); checked within 4 s.e.
  const std::size_t d = 40;
  std::vector<double> values;
  for (std::uint64_t seed = 0; seed < 40; ++seed) values.push_back(teacher::draw(d, 0.5, seed).second_moment());
  const auto m = sample_moments(values);
  const double expected = (40.0 + 20.0 + 1.0) / 40.0;
  EXPECT_NEAR(m.mean, expected, 4 * std::sqrt(m.var / static_cast<double>(m.n)));
}

TEST(TiedErmData, SequencesDependOnlyOnTheirAddress) {
  slr::tied::problem p;
  p.T = 3;
  const auto t = teacher::draw(20, 0.5, 3);
  const auto all = dataset::generate(p, t, 50, 7, stream_purpose::training_data);
  const auto part = dataset::generate(p, t, 10, 7, stream_purpose::training_data, 20);
  EXPECT_EQ(part.tokens(), all.tokens().middleRows(60, 30));
  EXPECT_EQ(part.labels(), all.labels().middleRows(60, 30));
  EXPECT_EQ(part.clean_labels(), all.clean_labels().middleRows(60, 30));
  // Token a of sequence μ is the stream (seed, purpose, μ, a).
  std::vector<double> token(20);
  slr::erm::normal_stream(7, stream_purpose::training_data, 13, 2).fill(token);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(all.tokens()(13 * 3 + 2, i), token[static_cast<std::size_t>(i)]);
  // Another purpose gives other numbers.
  const auto test = dataset::generate(p, t, 5, 7, stream_purpose::test_data);
  EXPECT_NE(test.tokens().row(0), all.tokens().row(0));
}

TEST(TiedErmData, LabelsAreRowSoftmaxesWithTheSpecifiedFieldAndNoiseVariances) {
  // T = 2, β0 = 1: log(Y_a0/Y_a1) = (h_a0 + e_a0) − (h_a1 + e_a1). The clean part has variance
  // E h_aa² + E h_ab² = (2 + 1) q*, q* = (1/d) Tr S*²; the noise part Δ(1 + 1/2).
  slr::tied::problem p;
  p.delta = 0.5;
  const std::size_t n = 20000;
  const auto t = teacher::draw(30, 0.5, 5);
  const auto data = dataset::generate(p, t, n, 9, stream_purpose::training_data);
  std::vector<double> clean_logit, noise_logit;
  for (std::size_t mu = 0; mu < n; ++mu)
    for (int a = 0; a < 2; ++a) {
      const auto r = static_cast<Eigen::Index>(2 * mu + static_cast<std::size_t>(a));
      EXPECT_NEAR(data.labels().row(r).sum(), 1.0, 1e-15);
      const double c = std::log(data.clean_labels()(r, 0) / data.clean_labels()(r, 1));
      const double y = std::log(data.labels()(r, 0) / data.labels()(r, 1));
      if (a == 0) { // one row per sequence keeps the samples independent
        clean_logit.push_back(c);
        noise_logit.push_back(y - c);
      }
    }
  const auto c = sample_moments(clean_logit), e = sample_moments(noise_logit);
  const double var_se = std::sqrt(2.0 / static_cast<double>(n - 1));
  EXPECT_NEAR(c.var, 3 * t.second_moment(), 4 * var_se * 3 * t.second_moment());
  EXPECT_NEAR(e.var, 0.75, 4 * var_se * 0.75);
  EXPECT_NEAR(e.mean, 0.0, 4 * std::sqrt(0.75 / static_cast<double>(n)));

  p.delta = 0;
  const auto noiseless = dataset::generate(p, t, 100, 9, stream_purpose::training_data);
  EXPECT_EQ(noiseless.labels(), noiseless.clean_labels());
}

TEST(TiedErmData, BadInputsNameTheParameter) {
  const auto t = teacher::draw(10, 0.5, 1);
  slr::tied::problem p;
  try {
    (void)dataset::generate(p, t, 0, 1, stream_purpose::training_data);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("count:", 0), 0u);
  }
  p.beta0 = -1;
  EXPECT_THROW((void)dataset::generate(p, t, 3, 1, stream_purpose::training_data), std::invalid_argument);
  EXPECT_THROW((void)teacher::draw(1, 0.5, 1), std::invalid_argument);
  EXPECT_THROW((void)teacher::draw(10, 1.5, 1), std::invalid_argument);
}

} // namespace
