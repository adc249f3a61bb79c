#include "slr/tied_erm/measure.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include <cblas.h>

#include "slr/tied_erm/risk.hpp"

namespace {

using slr::tied::parametrisation;
using namespace slr::tied_erm;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

TEST(TiedErmMeasure, ObservablesFollowTheirDefinitions) {
  slr::tied::problem p;
  p.alpha = 0.5;
  p.k = 0.75;
  erm_settings s;
  s.d = 24;
  s.seed = 3;
  s.n_test = 500;
  Eigen::MatrixXd S;
  const auto m = run_erm(p, s, &S);
  const double d = 24;
  ASSERT_EQ(S.rows(), 24);
  EXPECT_EQ(m.n_train, training_size(0.5, 24));
  EXPECT_EQ(m.n_train, 288u);
  EXPECT_EQ(m.n_test, 500u);
  EXPECT_EQ(m.optimiser.status, solver_status::converged);

  // Recompute from S, the regenerated teacher and the test set.
  const auto t = teacher::draw(24, p.k0, 3);
  const auto test = dataset::generate(p, t, 500, 3, slr::model::stream_purpose::test_data);
  EXPECT_NEAR(m.q, S.squaredNorm() / d, 1e-14);
  EXPECT_NEAR(m.m, (S.array() * t.S.array()).sum() / d, 1e-14);
  EXPECT_NEAR(m.target_second_moment, (t.S * t.S).trace() / d, 1e-12);
  EXPECT_NEAR(m.mse_S, m.target_second_moment + m.q - 2 * m.m, 1e-12);
  EXPECT_NEAR(m.trace_per_d, S.trace() / d, 1e-14);
  ASSERT_EQ(m.eigenvalues.size(), 24);
  EXPECT_NEAR(m.eigenvalues.sum(), S.trace(), 1e-10);
  for (Eigen::Index i = 1; i < 24; ++i) EXPECT_LE(m.eigenvalues(i - 1), m.eigenvalues(i));
  const double top = m.eigenvalues.maxCoeff();
  EXPECT_DOUBLE_EQ(m.rank_rel_1e3, static_cast<double>((m.eigenvalues.array() > 1e-3 * top).count()) / d);
  EXPECT_DOUBLE_EQ(m.rank_rel_1e2, static_cast<double>((m.eigenvalues.array() > 1e-2 * top).count()) / d);
  EXPECT_LE(m.rank_rel_1e3, 0.75); // the factorised student has rank ≤ k d
  EXPECT_GE(m.rank_rel_1e3, m.rank_rel_1e2);
  // objective_per_d2 = α·train_loss + λ (1/d) Tr S for the factorised model (§1.6).
  EXPECT_NEAR(m.objective_per_d2, 288.0 / (d * d) * m.train_loss + p.lambda * m.trace_per_d, 1e-14);
  EXPECT_NEAR(m.objective_per_d2, m.optimiser.objective_per_d2, 1e-12 * m.objective_per_d2);
  EXPECT_LT(m.kkt_residual, 1e-4);

  // Test errors: per-sequence errors of σ_β(h(Ŝ)) against both label sets, mean ± s.d./√n.
  Eigen::VectorXd noisy(500), clean(500);
  for (Eigen::Index mu = 0; mu < 500; ++mu) {
    const Eigen::MatrixXd X = test.tokens().middleRows(2 * mu, 2);
    Eigen::MatrixXd h = X * S * X.transpose();
    h.diagonal().array() -= S.trace();
    h /= std::sqrt(d);
    noisy(mu) = clean(mu) = 0;
    for (int a = 0; a < 2; ++a) {
      Eigen::RowVectorXd e = h.row(a).array().exp().matrix();
      e /= e.sum();
      noisy(mu) += (e - test.labels().row(2 * mu + a)).squaredNorm();
      clean(mu) += (e - test.clean_labels().row(2 * mu + a)).squaredNorm();
    }
  }
  EXPECT_NEAR(m.test_clean, clean.mean(), 1e-12);
  EXPECT_NEAR(m.test_noisy, noisy.mean(), 1e-12);
  const double sd_clean = std::sqrt((clean.array() - clean.mean()).square().sum() / 499.0);
  EXPECT_NEAR(m.test_clean_se, sd_clean / std::sqrt(500.0), 1e-12);
  EXPECT_GT(m.test_noisy, m.test_clean); // the label noise adds its variance
}

TEST(TiedErmMeasure, RunsAreDeterministicAndIndependentOfBlasThreads) {
  slr::tied::problem p;
  p.alpha = 1.0;
  erm_settings s;
  s.d = 30;
  s.seed = 1;
  s.n_test = 300;
  const int threads = openblas_get_num_threads();
  openblas_set_num_threads(1);
  const auto one = run_erm(p, s);
  const auto again = run_erm(p, s);
  openblas_set_num_threads(2);
  const auto two = run_erm(p, s);
  openblas_set_num_threads(threads);
  EXPECT_EQ(one.eigenvalues, again.eigenvalues);
  EXPECT_EQ(one.test_clean, again.test_clean);
  // The minimiser is unique; a different BLAS partition can only move it within the tolerance.
  EXPECT_LT((one.eigenvalues - two.eigenvalues).norm(), 1e-5 * one.eigenvalues.norm());
  EXPECT_NEAR(one.test_clean, two.test_clean, 1e-6 * one.test_clean);
}

TEST(TiedErmMeasure, DirectHasNoKktAndConvexHasExactZeros) {
  slr::tied::problem p;
  p.alpha = 0.3;
  erm_settings s;
  s.d = 20;
  s.n_test = 200;
  p.param = parametrisation::direct;
  const auto direct = run_erm(p, s);
  EXPECT_TRUE(std::isnan(direct.kkt_residual));
  EXPECT_LT(direct.eigenvalues.minCoeff(), 0.0);
  // Ridge penalty: objective_per_d2 = α·train_loss + λ q.
  EXPECT_NEAR(direct.objective_per_d2, 120.0 / 400.0 * direct.train_loss + p.lambda * direct.q, 1e-14);
  p.param = parametrisation::psd_nuclear;
  s.solver.tolerance = 1e-10;
  const auto convex = run_erm(p, s);
  EXPECT_LT(convex.kkt_residual, 1e-8);
  const double top = convex.eigenvalues.maxCoeff();
  EXPECT_EQ((convex.eigenvalues.array() > 1e-12 * top).count(), (convex.eigenvalues.array() > 1e-3 * top).count());
}

TEST(TiedErmMeasure, MemoryEstimateIsCheckedBeforeAllocating) {
  slr::tied::problem p;
  p.alpha = 4;
  erm_settings s;
  s.d = 100;
  const double estimate = memory_estimate_bytes(p, s);
  const double tokens = 8.0 * 40000 * 2 * 100; // the training tokens alone
  // The data dominate: training and test tokens and labels, plus less than half as much again.
  const double data = dataset_bytes(40000, 2, 100) + dataset_bytes(4000, 2, 100);
  EXPECT_GT(data, tokens);
  EXPECT_GT(estimate, data);
  EXPECT_LT(estimate, 1.5 * data);
  s.memory_limit_bytes = 0.5 * estimate;
  const auto message = message_of([&] { (void)run_erm(p, s); });
  EXPECT_EQ(message.rfind("memory_limit_bytes:", 0), 0u) << message;
  EXPECT_NE(message.find("MB"), std::string::npos);
  s.memory_limit_bytes = 1.01 * estimate;
  EXPECT_EQ(message_of([&] { (void)memory_estimate_bytes(p, s); }), "");
  // Doubling d at fixed α multiplies the training tokens by 8.
  erm_settings big = s;
  big.d = 200;
  EXPECT_GT(memory_estimate_bytes(p, big) - estimate, 7 * tokens);
}

TEST(TiedErmMeasure, BadSettingsNameTheSetting) {
  slr::tied::problem p;
  erm_settings s;
  s.n_test = 1;
  EXPECT_EQ(message_of([&] { s.validate(); }).rfind("n_test:", 0), 0u);
  s = {};
  s.d = 1;
  EXPECT_EQ(message_of([&] { s.validate(); }).rfind("d:", 0), 0u);
  s = {};
  s.solver.tolerance = -1;
  EXPECT_EQ(message_of([&] { (void)run_erm(p, s); }).rfind("tolerance:", 0), 0u);
  s = {};
  p.alpha = 0;
  EXPECT_EQ(message_of([&] { (void)memory_estimate_bytes(p, s); }).rfind("alpha:", 0), 0u);
}

} // namespace
