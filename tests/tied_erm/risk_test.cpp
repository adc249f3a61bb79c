#include "slr/tied_erm/risk.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "slr/model/random.hpp"

namespace {

using slr::model::stream_purpose;
using slr::tied_erm::dataset;
using slr::tied_erm::teacher;

Eigen::MatrixXd random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  slr::model::counter_rng rng(seed, stream_purpose::repeat, 0);
  Eigen::MatrixXd M(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) M(i, j) = rng.normal();
  return M;
}

Eigen::MatrixXd random_symmetric(Eigen::Index d, std::uint64_t seed) {
  const Eigen::MatrixXd A = random_matrix(d, d, seed);
  return (A + A.transpose()) / std::sqrt(2.0 * static_cast<double>(d));
}

// ℒ(S) written out from the definition, one sequence at a time (no blocks, no BLAS).
double naive_loss(const slr::tied::problem& p, const dataset& data, const Eigen::MatrixXd& S) {
  const int T = p.T;
  const auto d = static_cast<double>(data.dimension());
  double total = 0;
  for (std::size_t mu = 0; mu < data.size(); ++mu) {
    const Eigen::MatrixXd X = data.tokens().middleRows(static_cast<Eigen::Index>(mu) * T, T);
    Eigen::MatrixXd h = X * S * X.transpose();
    h.diagonal().array() -= S.trace();
    h /= std::sqrt(d);
    for (int a = 0; a < T; ++a) {
      Eigen::VectorXd e = (p.beta * (h.row(a).array() - h.row(a).maxCoeff())).exp().matrix();
      e /= e.sum();
      total += (e.transpose() - data.labels().row(static_cast<Eigen::Index>(mu) * T + a)).squaredNorm();
    }
  }
  return total;
}

struct setting {
  int T;
  double beta;
};

class TiedErmRisk : public ::testing::TestWithParam<setting> {};

TEST_P(TiedErmRisk, LossIsTheDefinitionAndGradientMatchesCentralDifferences) {
  slr::tied::problem p;
  p.T = GetParam().T;
  p.beta = GetParam().beta;
  const std::size_t d = 14;
  const auto t = teacher::draw(d, 0.5, 2);
  const auto data = dataset::generate(p, t, 60, 4, stream_purpose::training_data);
  slr::tied_erm::empirical_risk risk(p, data);
  const Eigen::MatrixXd S = random_symmetric(14, 1) + t.S;
  Eigen::MatrixXd grad;
  const double value = risk.loss(S, &grad);
  EXPECT_NEAR(value, naive_loss(p, data, S), 1e-12 * value);
  EXPECT_EQ(risk.loss(S), value);
  EXPECT_LT((grad - grad.transpose()).norm(), 1e-14 * grad.norm());
  for (std::uint64_t k = 0; k < 4; ++k) {
    const Eigen::MatrixXd E = random_symmetric(14, 10 + k);
    const double eps = 1e-5;
    const double fd = (risk.loss(S + eps * E) - risk.loss(S - eps * E)) / (2 * eps);
    const double exact = (grad.array() * E.array()).sum();
    EXPECT_NEAR(fd, exact, 1e-7 * (std::abs(exact) + grad.norm() * E.norm())) << "direction " << k;
  }
  // The diagonal direction I (Tr S moves, the centring subtracts it): covered separately because
  // it is the only direction whose effect runs through the trace term.
  const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(14, 14);
  const double fd = (risk.loss(S + 1e-5 * I) - risk.loss(S - 1e-5 * I)) / 2e-5;
  EXPECT_NEAR(fd, grad.trace(), 1e-7 * (std::abs(grad.trace()) + grad.norm() * std::sqrt(14.0)));
}

INSTANTIATE_TEST_SUITE_P(Settings, TiedErmRisk,
                         ::testing::Values(setting{2, 1.0}, setting{3, 1.5}, setting{5, 0.7}));

TEST(TiedErmRiskBlocks, PassesOverSeveralBlocksAddUpLikeTheirParts) {
  // 2500 sequences span two blocks; the risk of the whole set is the sum over two address ranges.
  slr::tied::problem p;
  const std::size_t d = 10;
  const auto t = teacher::draw(d, 0.5, 3);
  const auto all = dataset::generate(p, t, 2500, 5, stream_purpose::training_data);
  const auto first = dataset::generate(p, t, 1300, 5, stream_purpose::training_data);
  const auto second = dataset::generate(p, t, 1200, 5, stream_purpose::training_data, 1300);
  slr::tied_erm::empirical_risk r_all(p, all), r_first(p, first), r_second(p, second);
  const Eigen::MatrixXd S = t.S + 0.3 * random_symmetric(10, 4);
  Eigen::MatrixXd g_all, g1, g2;
  const double v = r_all.loss(S, &g_all), v1 = r_first.loss(S, &g1), v2 = r_second.loss(S, &g2);
  EXPECT_NEAR(v, v1 + v2, 1e-12 * v);
  EXPECT_LT((g_all - g1 - g2).norm(), 1e-11 * g_all.norm());
  EXPECT_EQ(r_all.evaluations(), 1u);
  Eigen::VectorXd noisy, clean;
  r_all.sequence_errors(S, noisy, clean);
  EXPECT_NEAR(noisy.sum(), v, 1e-12 * v);
  // Against the teacher's own clean attention at S = S*, the clean error vanishes.
  r_all.sequence_errors(t.S, noisy, clean);
  EXPECT_LT(clean.maxCoeff(), 1e-28);
  EXPECT_GT(noisy.minCoeff(), 0.0);
}

class TiedErmObjective : public ::testing::TestWithParam<slr::tied::parametrisation> {};

TEST_P(TiedErmObjective, GradientInNormalisedCoordinatesMatchesCentralDifferences) {
  slr::tied::problem p;
  p.param = GetParam();
  p.k = 0.75;
  p.lambda = 0.05;
  const std::size_t d = 16;
  const auto t = teacher::draw(d, 0.5, 6);
  const auto data = dataset::generate(p, t, 120, 8, stream_purpose::training_data);
  slr::tied_erm::objective f(p, data);
  ASSERT_EQ(f.columns(), p.param == slr::tied::parametrisation::factorised ? 12u : 16u);
  const Eigen::VectorXd u = random_matrix(static_cast<Eigen::Index>(f.variables()), 1, 7).col(0) /
                            std::sqrt(static_cast<double>(d));
  Eigen::VectorXd g, scratch;
  const double value = f(u, g);
  // f = (ℒ + penalty)/d² at S(u), recomputed from the definition.
  const Eigen::MatrixXd S = f.matrix(u);
  EXPECT_NEAR(value, (naive_loss(p, data, S) + slr::tied_erm::penalty(p, S)) / (16.0 * 16.0), 1e-12 * value);
  for (std::uint64_t k = 0; k < 4; ++k) {
    const Eigen::VectorXd e = random_matrix(static_cast<Eigen::Index>(f.variables()), 1, 20 + k).col(0);
    const double eps = 1e-6;
    const double fd = (f(u + eps * e, scratch) - f(u - eps * e, scratch)) / (2 * eps);
    EXPECT_NEAR(fd, g.dot(e), 1e-7 * g.norm() * e.norm()) << "direction " << k;
  }
  // Coordinate derivatives, including a diagonal entry of u.
  for (Eigen::Index i : {Eigen::Index{0}, Eigen::Index{17}, static_cast<Eigen::Index>(f.variables()) - 1}) {
    Eigen::VectorXd e = Eigen::VectorXd::Zero(u.size());
    e(i) = 1;
    const double fd = (f(u + 1e-6 * e, scratch) - f(u - 1e-6 * e, scratch)) / 2e-6;
    EXPECT_NEAR(fd, g(i), 1e-7 * g.norm()) << "coordinate " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Parametrisations, TiedErmObjective,
                         ::testing::Values(slr::tied::parametrisation::factorised,
                                           slr::tied::parametrisation::direct));

TEST(TiedErmObjectiveUnits, WeightsAndMatricesMapToTheSpecifiedS) {
  slr::tied::problem p;
  p.k = 0.5;
  const auto t = teacher::draw(12, 0.5, 1);
  const auto data = dataset::generate(p, t, 10, 1, stream_purpose::training_data);
  slr::tied_erm::objective f(p, data);
  const Eigen::MatrixXd W = random_matrix(12, 6, 3);
  const Eigen::MatrixXd expected = W * W.transpose() / std::sqrt(6.0 * 12.0);
  EXPECT_LT((f.matrix(f.from_weights(W)) - expected).norm(), 1e-13 * expected.norm());
  // Penalty λ d Tr S = (λ/√k)‖W‖²_F (§1.5).
  EXPECT_NEAR(slr::tied_erm::penalty(p, expected), p.lambda / std::sqrt(0.5) * W.squaredNorm(), 1e-12);
  EXPECT_THROW((void)f.from_matrix(expected), std::invalid_argument);
  EXPECT_THROW((void)f.from_weights(W.leftCols(5)), std::invalid_argument);

  p.param = slr::tied::parametrisation::direct;
  slr::tied_erm::objective g(p, data);
  EXPECT_LT((g.matrix(g.from_matrix(expected)) - expected).norm(), 1e-14 * expected.norm());
  p.param = slr::tied::parametrisation::psd_nuclear;
  EXPECT_THROW(slr::tied_erm::objective(p, data), std::invalid_argument);
  p.param = slr::tied::parametrisation::direct;
  p.T = 3;
  try {
    slr::tied_erm::empirical_risk r(p, data);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("T:", 0), 0u);
  }
}

} // namespace
