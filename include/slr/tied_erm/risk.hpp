#pragma once
// Empirical risk of the tied attention student and the objectives of its parametrisations
// (docs/theory.md §T1):
//
//   ℒ(S) = Σ_μ ‖σ_β(h(S; X_μ)) − Y_μ‖²_F                  (no ½, no 1/n; seq2label)
//   ℒ(S) = (1/d) Σ_μ ‖(σ_β(h(S; X_μ)) − Y_μ) X_μ‖²_F      (seq2seq: the outputs A X against Y X)
//   factorised   S = W Wᵀ/√(r d), W ∈ R^{d×r}, r = max(1, round(k d)), penalty λ d Tr S (= (λ/√k)‖W‖²)
//   direct       S symmetric,                                   penalty λ d ‖S‖²_F
//   psd-nuclear  S ⪰ 0,                                          penalty λ d Tr S
//
// Costs: one loss + gradient is one dgemm (tokens · S, (nT)×d×d) and one pair of dsyrk (nT rows)
// plus O(n T² d) per-sequence work, done in blocks of sequences so the scratch memory is O(T d)
// per sequence of a block, not O(n T d).
//
// The optimisers work in normalised coordinates u, in which the objective f = (ℒ + penalty)/d²
// and u are O(1) whatever d (so one relative gradient tolerance means the same at every d):
//   factorised  u = W/(r d³)^{1/4} ∈ R^{d×r}, S = d u uᵀ;   direct  u ∈ R^{d×d}, S = √d (u + uᵀ)/2.
// Vectors hold matrices column-major.
#include <cstddef>

#include <Eigen/Core>

#include "slr/tied/problem.hpp"
#include "slr/tied_erm/data.hpp"

namespace slr::tied_erm {

/// r = max(1, round(k d)). Throws std::invalid_argument if d < 2 or k is not finite and > 0.
[[nodiscard]] std::size_t student_width(double k, std::size_t d);

/// ℒ and its gradient on one dataset. Holds a reference to the data (which must outlive it) and
/// block scratch; not thread-safe (one per thread). The problem gives β (and T and the label form,
/// checked against the data's); the data's label form selects the seq2label or seq2seq ℒ.
/// Constructing one sets OpenBLAS to one thread for the whole process: a threaded dgemm/dsyrk
/// splits its sums by the thread count, and results must not depend on OPENBLAS_NUM_THREADS,
/// OMP_NUM_THREADS or the CPUs a rank may use (a sweep runs one rank per core anyway).
class empirical_risk {
public:
  /// Throws std::invalid_argument if the problem is invalid or its T differs from the data's.
  empirical_risk(const tied::problem& problem, const dataset& data);

  /// ℒ(S) for a symmetric d×d S (only its upper triangle is read). If gradient is non-null it
  /// receives ∇_S ℒ, the gradient within symmetric matrices (Frobenius metric), a symmetric d×d.
  /// Throws std::invalid_argument if S is not d×d.
  double loss(const Eigen::MatrixXd& S, Eigen::MatrixXd* gradient = nullptr);

  /// Per-sequence errors e_μ = ‖σ_β(h(S; X_μ)) − Y_μ‖²_F against the noisy labels, and against the
  /// clean teacher attention σ_β0(h(S*; X_μ)) (both length n); for seq2seq data the output form
  /// ‖(σ_β(h) − Y_μ) X_μ‖²_F/d. Throws like loss().
  void sequence_errors(const Eigen::MatrixXd& S, Eigen::VectorXd& noisy, Eigen::VectorXd& clean);

  [[nodiscard]] const dataset& data() const noexcept { return *data_; }
  [[nodiscard]] double beta() const noexcept { return beta_; }
  /// Loss evaluations so far (with or without gradient).
  [[nodiscard]] std::size_t evaluations() const noexcept { return evaluations_; }

private:
  double pass(const Eigen::MatrixXd& S, Eigen::MatrixXd* gradient, Eigen::VectorXd* noisy, Eigen::VectorXd* clean);
  const dataset* data_;
  double beta_;
  std::size_t evaluations_ = 0;
  row_matrix P_, Y_; // block scratch: tokens·S and the signed rank-one rows of the gradient
};

/// Penalty of the problem's parametrisation at S (λ d Tr S or λ d ‖S‖²_F).
[[nodiscard]] double penalty(const tied::problem& problem, const Eigen::MatrixXd& S);

/// f(u) = (ℒ(S(u)) + penalty(S(u)))/d² in the normalised coordinates above, for the factorised and
/// direct parametrisations (the psd-nuclear program is solved on S itself, solver.hpp).
class objective {
public:
  /// Throws std::invalid_argument if the parametrisation is psd-nuclear (or as empirical_risk).
  objective(const tied::problem& problem, const dataset& data);

  /// f(u) and ∇_u f (LBFGS++ calling convention). u.size() must be variables().
  double operator()(const Eigen::VectorXd& u, Eigen::VectorXd& gradient);
  /// S(u). Throws std::invalid_argument if u has the wrong size.
  [[nodiscard]] Eigen::MatrixXd matrix(const Eigen::VectorXd& u) const;
  /// u of paper-unit weights W (d×r): u = W/(r d³)^{1/4}. Factorised only; throws otherwise or on
  /// a wrong shape.
  [[nodiscard]] Eigen::VectorXd from_weights(const Eigen::MatrixXd& W) const;
  /// u of a symmetric S: u = S/√d. Direct only; throws otherwise or on a wrong shape.
  [[nodiscard]] Eigen::VectorXd from_matrix(const Eigen::MatrixXd& S) const;

  [[nodiscard]] std::size_t variables() const noexcept { return d_ * columns_; }
  [[nodiscard]] std::size_t dimension() const noexcept { return d_; }
  /// r (factorised) or d (direct).
  [[nodiscard]] std::size_t columns() const noexcept { return columns_; }
  [[nodiscard]] empirical_risk& risk() noexcept { return risk_; }
  [[nodiscard]] const tied::problem& problem() const noexcept { return problem_; }

private:
  tied::problem problem_;
  empirical_risk risk_;
  std::size_t d_, columns_;
  Eigen::MatrixXd grad_S_;
};

} // namespace slr::tied_erm
