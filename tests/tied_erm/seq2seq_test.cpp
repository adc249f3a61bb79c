// Sequence-to-sequence ERM (docs/theory.md §T1, "Sequence-to-sequence labels") against a direct
// evaluation written for this test: the outputs Ŷ = σ_β(h(S; X)) X and the targets Y X formed as
// matrices, the loss (1/d) Σ_μ ‖Ŷ_μ − (Y X)_μ‖²_F summed as written, its gradient by central
// differences of that sum. Nothing here uses the Gram-matrix form of the kernels.
#include "slr/tied_erm/measure.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "slr/model/random.hpp"
#include "slr/tied_erm/risk.hpp"

namespace {

using slr::model::stream_purpose;
using slr::tied::label_form;
using namespace slr::tied_erm;

Eigen::MatrixXd random_symmetric(Eigen::Index d, std::uint64_t seed) {
  slr::model::counter_rng rng(seed, stream_purpose::repeat, 0);
  Eigen::MatrixXd A(d, d);
  for (Eigen::Index j = 0; j < d; ++j)
    for (Eigen::Index i = 0; i < d; ++i) A(i, j) = rng.normal();
  return (A + A.transpose()) / std::sqrt(2.0 * static_cast<double>(d));
}

Eigen::MatrixXd attention(const Eigen::MatrixXd& X, const Eigen::MatrixXd& S, double beta) {
  const double d = static_cast<double>(X.cols());
  Eigen::MatrixXd h = X * S * X.transpose();
  h.diagonal().array() -= S.trace();
  h /= std::sqrt(d);
  Eigen::MatrixXd A(h.rows(), h.cols());
  for (Eigen::Index a = 0; a < h.rows(); ++a) {
    const Eigen::ArrayXd e = (beta * (h.row(a).array() - h.row(a).maxCoeff())).exp().transpose();
    A.row(a) = (e / e.sum()).matrix().transpose();
  }
  return A;
}

// (1/d) Σ_μ ‖σ_β(h(S; X_μ)) X_μ − Y_μ X_μ‖²_F.
double direct_seq2seq_loss(const slr::tied::problem& p, const dataset& data, const Eigen::MatrixXd& S) {
  const int T = p.T;
  const double d = static_cast<double>(data.dimension());
  double total = 0;
  for (std::size_t mu = 0; mu < data.size(); ++mu) {
    const Eigen::MatrixXd X = data.tokens().middleRows(static_cast<Eigen::Index>(mu) * T, T);
    const Eigen::MatrixXd Y = data.labels().middleRows(static_cast<Eigen::Index>(mu) * T, T);
    total += (attention(X, S, p.beta) * X - Y * X).squaredNorm() / d;
  }
  return total;
}

// ∇_S within symmetric matrices (Frobenius metric) by central differences over the basis
// E_ii, (E_ij + E_ji)/√2 … written back as the symmetric matrix of directional derivatives.
Eigen::MatrixXd difference_gradient(const slr::tied::problem& p, const dataset& data, const Eigen::MatrixXd& S,
                                    double penalty_ridge) {
  const auto d = S.rows();
  Eigen::MatrixXd g(d, d);
  const double eps = 1e-5;
  for (Eigen::Index i = 0; i < d; ++i)
    for (Eigen::Index j = i; j < d; ++j) {
      Eigen::MatrixXd E = Eigen::MatrixXd::Zero(d, d);
      E(i, j) = E(j, i) = 1;
      const auto f = [&](const Eigen::MatrixXd& M) {
        return direct_seq2seq_loss(p, data, M) + penalty_ridge * M.squaredNorm();
      };
      const double derivative = (f(S + eps * E) - f(S - eps * E)) / (2 * eps);
      g(i, j) = g(j, i) = i == j ? derivative : derivative / 2;
    }
  return g;
}

TEST(TiedErmSeq2Seq, LossAndGradientAreThoseOfTheOutputs) {
  for (int T : {2, 3}) {
    slr::tied::problem p;
    p.T = T;
    p.beta = 1.3;
    p.labels = label_form::seq2seq;
    const std::size_t d = 9;
    const auto t = teacher::draw(d, 0.5, 2);
    const auto data = dataset::generate(p, t, 40, 4, stream_purpose::training_data);
    ASSERT_EQ(data.label_form(), label_form::seq2seq);
    empirical_risk risk(p, data);
    const Eigen::MatrixXd S = t.S + 0.5 * random_symmetric(static_cast<Eigen::Index>(d), 1);
    Eigen::MatrixXd grad;
    const double value = risk.loss(S, &grad);
    const double direct = direct_seq2seq_loss(p, data, S);
    EXPECT_NEAR(value, direct, 1e-12 * direct) << "T = " << T;
    const Eigen::MatrixXd g = difference_gradient(p, data, S, 0.0);
    EXPECT_LT((grad - g).norm(), 1e-7 * g.norm()) << "T = " << T;

    // The same sequences with sequence-to-label labels give another loss (by O(d^{-1/2}) per
    // sequence), so the comparison above can fail.
    auto q = p;
    q.labels = label_form::seq2label;
    const auto attention_data = dataset::generate(q, t, 40, 4, stream_purpose::training_data);
    empirical_risk attention_risk(q, attention_data);
    EXPECT_GT(std::abs(attention_risk.loss(S) - direct), 1e-3 * direct);
    EXPECT_THROW(empirical_risk(q, data), std::invalid_argument);
  }
}

TEST(TiedErmSeq2Seq, TrainedMatrixIsStationaryForTheDirectOutputLoss) {
  // Direct parametrisation: Ŝ minimises ℒ(S) + λ d ‖S‖²_F, so the difference gradient of the direct
  // evaluation vanishes there; at the sequence-to-label minimiser of the same data it does not.
  slr::tied::problem p;
  p.param = slr::tied::parametrisation::direct;
  p.alpha = 2;
  p.lambda = 0.01;
  p.labels = label_form::seq2seq;
  erm_settings s;
  s.d = 8;
  s.seed = 5;
  s.n_test = 200;
  s.solver.tolerance = 1e-10;
  Eigen::MatrixXd S_seq, S_label;
  const auto m_seq = run_erm(p, s, &S_seq);
  auto q = p;
  q.labels = label_form::seq2label;
  const auto m_label = run_erm(q, s, &S_label);

  const auto t = teacher::draw(s.d, p.k0, s.seed);
  const auto train = dataset::generate(p, t, training_size(p.alpha, s.d), s.seed, stream_purpose::training_data);
  const double ridge = p.lambda * static_cast<double>(s.d);
  const Eigen::MatrixXd g_seq = difference_gradient(p, train, S_seq, ridge);
  const Eigen::MatrixXd g_label = difference_gradient(p, train, S_label, ridge);
  const double scale = difference_gradient(p, train, Eigen::MatrixXd::Zero(8, 8), ridge).norm();
  EXPECT_LT(g_seq.norm(), 1e-5 * scale);
  EXPECT_GT(g_label.norm(), 1e-3 * scale);
  // The reported training loss is the output loss per sequence; the test errors are of the
  // attention matrix in both forms (the same test sequences).
  EXPECT_NEAR(m_seq.train_loss, direct_seq2seq_loss(p, train, S_seq) / static_cast<double>(train.size()),
              1e-10 * m_seq.train_loss);
  EXPECT_EQ(m_seq.n_test, m_label.n_test);
  EXPECT_NEAR(m_seq.test_clean, m_label.test_clean, 0.2 * m_label.test_clean);
  EXPECT_NE(m_seq.test_clean, m_label.test_clean);
}

} // namespace
