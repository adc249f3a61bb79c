#include "slr/tied_erm/risk.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <cblas.h>

#include "kernels.hpp"

// OpenBLAS's own control (declared here: the cblas.h found first may be another vendor's).
extern "C" void openblas_set_num_threads(int threads);

namespace slr::tied_erm {

namespace {
void require(bool ok, const char* name, const std::string& reason) {
  if (!ok) throw std::invalid_argument(std::string(name) + ": " + reason);
}

// C += sign · Aᵀ A on the upper triangle, A = `rows` consecutive rows (length d) of a row-major
// array: read column-major, those rows form the d×rows matrix Aᵀ, so this is dsyrk(NoTrans).
void rank_update(const double* rows_begin, std::size_t rows, std::size_t d, double sign, Eigen::MatrixXd& C) {
  if (rows == 0) return;
  const auto n = static_cast<int>(d);
  cblas_dsyrk(CblasColMajor, CblasUpper, CblasNoTrans, n, static_cast<int>(rows), sign, rows_begin, n, 1.0,
              C.data(), n);
}
} // namespace

std::size_t student_width(double k, std::size_t d) {
  require(d >= 2, "d", "must be >= 2");
  require(std::isfinite(k) && k > 0, "k", "must be finite and > 0");
  return std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(k * static_cast<double>(d))));
}

empirical_risk::empirical_risk(const tied::problem& problem, const dataset& data) : data_(&data), beta_(problem.beta) {
  openblas_set_num_threads(1); // thread-count-independent sums (see the class comment)
  problem.validate();
  require(problem.T == data.tokens_per_sequence(), "T", "the problem's T differs from the data's");
  require(problem.labels == data.label_form(), "labels",
          "the problem's label form (" + std::string(tied::label_form_name(problem.labels)) +
              ") differs from the data's (" + std::string(tied::label_form_name(data.label_form())) + ")");
}

double empirical_risk::loss(const Eigen::MatrixXd& S, Eigen::MatrixXd* gradient) {
  return pass(S, gradient, nullptr, nullptr);
}

void empirical_risk::sequence_errors(const Eigen::MatrixXd& S, Eigen::VectorXd& noisy, Eigen::VectorXd& clean) {
  noisy.resize(static_cast<Eigen::Index>(data_->size()));
  clean.resize(static_cast<Eigen::Index>(data_->size()));
  (void)pass(S, nullptr, &noisy, &clean);
}

// One pass over the data in blocks of sequences. Per block: P = X_block·S (dgemm), the fields and
// softmax rows of every sequence, and — for the gradient — G_μ = ∂ℓ_μ/∂h, whose contribution to
// ∇_S ℒ is X_μᵀ sym(G_μ) X_μ/√d − tr(G_μ) I/√d. Writing sym(G_μ)/√d = Σ_j γ_j v_j v_jᵀ (T×T
// eigen-decomposition), X_μᵀ(·)X_μ = Σ_j γ_j y_j y_jᵀ with y_j = X_μᵀ v_j: a sum of signed rank-one
// terms, accumulated by two dsyrk per block (rows with γ > 0 from the top of Y, γ < 0 from the
// bottom, each scaled by √|γ|). A dsyrk costs half a dgemm of the same size, so loss + gradient
// costs 1.5 products X·S, the least a forward and a backward product allow.
double empirical_risk::pass(const Eigen::MatrixXd& S, Eigen::MatrixXd* gradient, Eigen::VectorXd* noisy,
                            Eigen::VectorXd* clean) {
  const dataset& D = *data_;
  const std::size_t d = D.dimension(), n = D.size();
  const int T = D.tokens_per_sequence();
  const auto Tz = static_cast<std::size_t>(T);
  require(static_cast<std::size_t>(S.rows()) == d && static_cast<std::size_t>(S.cols()) == d, "S",
          "must be a d×d matrix (d = " + std::to_string(d) + ")");
  ++evaluations_;
  const Eigen::MatrixXd Ssym = S.selfadjointView<Eigen::Upper>();
  const double trace = Ssym.trace();
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(d));
  const std::size_t block_rows = std::min(n, detail::block_sequences) * Tz;
  if (static_cast<std::size_t>(P_.rows()) < block_rows) P_.resize(static_cast<Eigen::Index>(block_rows), static_cast<Eigen::Index>(d));
  if (gradient != nullptr) {
    if (static_cast<std::size_t>(Y_.rows()) < block_rows) Y_.resize(static_cast<Eigen::Index>(block_rows), static_cast<Eigen::Index>(d));
    gradient->setZero(static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(d));
  }
  const row_matrix& X = D.tokens();
  // ℒ is a sum of n positive terms; the line search compares ℒ at nearby points, so the sum is
  // compensated (Neumaier, in process_block): plain summation adds noise ~√n ε ℒ that sets the
  // floor of the reachable gradient at large n.
  detail::block_output acc;
  for (std::size_t begin = 0; begin < n; begin += detail::block_sequences) {
    const std::size_t block = std::min(detail::block_sequences, n - begin);
    detail::multiply_tokens(X, begin * Tz, block * Tz, Ssym, P_.data());
    detail::block_input in;
    in.X = X.data() + begin * Tz * d;
    in.P = P_.data();
    in.labels = D.labels().data() + begin * Tz * Tz;
    in.clean = D.clean_labels().data() + begin * Tz * Tz;
    if (D.label_form() == tied::label_form::seq2seq) in.gram = D.token_gram().data() + begin * Tz * Tz;
    in.sequences = block;
    in.d = d;
    in.T = T;
    in.trace = trace;
    in.inv_sqrt_d = inv_sqrt_d;
    in.beta = beta_;
    if (gradient != nullptr) {
      in.Y = Y_.data();
      in.Y_rows = block_rows;
    }
    if (noisy != nullptr) in.noisy_out = noisy->data() + begin;
    if (clean != nullptr) in.clean_out = clean->data() + begin;
    detail::process_block(in, acc);
    if (gradient != nullptr) {
      rank_update(Y_.data(), acc.positive, d, 1.0, *gradient);
      rank_update(Y_.data() + (block_rows - acc.negative) * d, acc.negative, d, -1.0, *gradient);
    }
  }
  if (gradient != nullptr) {
    gradient->triangularView<Eigen::StrictlyLower>() = gradient->transpose();
    gradient->diagonal().array() -= acc.trace_G * inv_sqrt_d;
  }
  return acc.loss + acc.compensation;
}

double penalty(const tied::problem& problem, const Eigen::MatrixXd& S) {
  const auto d = static_cast<double>(S.rows());
  if (problem.param == tied::parametrisation::direct) return problem.lambda * d * S.squaredNorm();
  return problem.lambda * d * S.trace();
}

objective::objective(const tied::problem& problem, const dataset& data)
    : problem_(problem), risk_(problem, data), d_(data.dimension()) {
  require(problem.param != tied::parametrisation::psd_nuclear, "parametrisation",
          "psd-nuclear is solved on S by proximal gradient, not through an objective in u");
  columns_ = problem.param == tied::parametrisation::factorised ? student_width(problem.k, d_) : d_;
}

Eigen::MatrixXd objective::matrix(const Eigen::VectorXd& u) const {
  require(static_cast<std::size_t>(u.size()) == variables(), "u", "has the wrong size");
  const auto d = static_cast<Eigen::Index>(d_);
  const Eigen::Map<const Eigen::MatrixXd> U(u.data(), d, static_cast<Eigen::Index>(columns_));
  if (problem_.param == tied::parametrisation::factorised) {
    Eigen::MatrixXd S = Eigen::MatrixXd::Zero(d, d);
    S.selfadjointView<Eigen::Upper>().rankUpdate(U, static_cast<double>(d_));
    return S.selfadjointView<Eigen::Upper>();
  }
  return 0.5 * std::sqrt(static_cast<double>(d_)) * (U + U.transpose());
}

Eigen::VectorXd objective::from_weights(const Eigen::MatrixXd& W) const {
  require(problem_.param == tied::parametrisation::factorised, "parametrisation", "weights are factorised only");
  require(static_cast<std::size_t>(W.rows()) == d_ && static_cast<std::size_t>(W.cols()) == columns_, "W",
          "must be d×r");
  const double scale = std::pow(static_cast<double>(columns_) * std::pow(static_cast<double>(d_), 3), -0.25);
  return Eigen::Map<const Eigen::VectorXd>(W.data(), W.size()) * scale;
}

Eigen::VectorXd objective::from_matrix(const Eigen::MatrixXd& S) const {
  require(problem_.param == tied::parametrisation::direct, "parametrisation", "a matrix start is direct only");
  require(static_cast<std::size_t>(S.rows()) == d_ && static_cast<std::size_t>(S.cols()) == d_, "S", "must be d×d");
  const Eigen::MatrixXd U = S.selfadjointView<Eigen::Upper>();
  return Eigen::Map<const Eigen::VectorXd>(U.data(), U.size()) / std::sqrt(static_cast<double>(d_));
}

double objective::operator()(const Eigen::VectorXd& u, Eigen::VectorXd& gradient) {
  const Eigen::MatrixXd S = matrix(u);
  const double dd = static_cast<double>(d_);
  const double value = risk_.loss(S, &grad_S_) + penalty(problem_, S);
  gradient.resize(u.size());
  const auto d = static_cast<Eigen::Index>(d_);
  const Eigen::Map<const Eigen::MatrixXd> U(u.data(), d, static_cast<Eigen::Index>(columns_));
  Eigen::Map<Eigen::MatrixXd> gU(gradient.data(), d, static_cast<Eigen::Index>(columns_));
  if (problem_.param == tied::parametrisation::factorised) {
    // f = (ℒ + λ d Tr S)/d², S = d u uᵀ:  ∇_u f = (2/d)(∇_S ℒ + λ d I) u.
    grad_S_.diagonal().array() += problem_.lambda * dd;
    gU.noalias() = (2.0 / dd) * (grad_S_ * U);
  } else {
    // f = (ℒ + λ d ‖S‖²)/d², S = √d sym(u):  ∇_u f = √d (∇_S ℒ + 2λ d S)/d² (already symmetric).
    gU = (std::sqrt(dd) / (dd * dd)) * (grad_S_ + 2 * problem_.lambda * dd * S);
  }
  return value / (dd * dd);
}

} // namespace slr::tied_erm
