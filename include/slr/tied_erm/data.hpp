#pragma once
// Finite-d data of the attention-indexed model (docs/theory.md §T1–1.4): the MP teacher S* and
// sequences X_μ ∈ R^{T×d} with their T×T attention labels.
//
//   tokens   x_a ~ N(0, I_d), a = 1..T
//   teacher  S* = W* W*ᵀ/√(r* d), W* ∈ R^{d×r*} iid N(0, 1), r* = max(1, round(k0 d))
//   field    h_ab(S; X) = (x_aᵀ S x_b − δ_ab Tr S)/√d
//   labels   Y = σ_β0(h(S*; X) + √Δ Ξ), Ξ symmetric, Ξ_aa ~ N(0, 1), Ξ_ab = Ξ_ba ~ N(0, 1/2)
//   seq2seq  the targets are Y X; the risk needs only the token Gram matrix K = X Xᵀ/d of each
//            sequence besides Y (‖(A − Y) X‖²/d = Σ_a (A − Y)_a K (A − Y)_aᵀ), so that is stored
//
// Every number is addressed by (seed, purpose, index) through erm::normal_stream, so a sequence is
// the same whatever range or thread generates it:
//   column j of W*          normal_stream(seed, teacher_weights, 0, j), positions 0..d−1
//   token a of sequence μ   normal_stream(seed, purpose, μ, a),         positions 0..d−1
//   label noise of μ        normal_stream(seed, purpose, μ, T),         positions 0..L−1 in the order
//                           (0,0),(0,1)…(0,T−1),(1,1)…(T−1,T−1) (upper triangle, row by row)
#include <cstddef>
#include <cstdint>

#include <Eigen/Core>

#include "slr/model/random.hpp"
#include "slr/tied/problem.hpp"

namespace slr::tied_erm {

/// Row-major dense matrix: tokens (row μT + a is token a of sequence μ) and label rows.
using row_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// r* = max(1, round(k0 d)). Throws std::invalid_argument if d < 2 or k0 ∉ (0, 1].
[[nodiscard]] std::size_t target_rank(double k0, std::size_t d);

/// The Marchenko–Pastur teacher S* (d×d, symmetric PSD, spectrum O(1)).
struct teacher {
  Eigen::MatrixXd S;    ///< S* = W* W*ᵀ/√(r* d)
  std::size_t rank = 0; ///< r*
  /// Throws std::invalid_argument if d < 2 or k0 ∉ (0, 1].
  static teacher draw(std::size_t d, double k0, std::uint64_t seed);
  [[nodiscard]] std::size_t dimension() const noexcept { return static_cast<std::size_t>(S.rows()); }
  /// Realised (1/d) Tr S*² (1 + k0 + 1/d on average).
  [[nodiscard]] double second_moment() const noexcept;
};

/// n sequences with both the noiseless teacher attention σ_β0(h(S*)) and the noisy labels.
class dataset {
public:
  /// Draws sequences first_index … first_index + count − 1 of the stream (seed, purpose) for the
  /// problem's T, β0 and Δ. Throws std::invalid_argument if count == 0, the problem is invalid
  /// (problem::validate) or the teacher has dimension < 2.
  static dataset generate(const tied::problem& problem, const teacher& teacher, std::size_t count,
                          std::uint64_t seed, model::stream_purpose purpose, std::uint64_t first_index = 0);

  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] int tokens_per_sequence() const noexcept { return T_; }
  [[nodiscard]] std::size_t dimension() const noexcept { return static_cast<std::size_t>(tokens_.cols()); }
  /// (n·T) × d; row μT + a is token a of sequence μ.
  [[nodiscard]] const row_matrix& tokens() const noexcept { return tokens_; }
  /// (n·T) × T; row μT + a is row a of the noisy label matrix Y_μ (rows sum to 1).
  [[nodiscard]] const row_matrix& labels() const noexcept { return labels_; }
  /// (n·T) × T; row μT + a is row a of σ_β0(h(S*; X_μ)) (no label noise).
  [[nodiscard]] const row_matrix& clean_labels() const noexcept { return clean_; }
  /// Sequence-to-sequence data (the problem's labels were seq2seq): (n·T) × T, row μT + a is row a
  /// of K_μ = X_μ X_μᵀ/d. Empty (0 rows) for sequence-to-label data.
  [[nodiscard]] const row_matrix& token_gram() const noexcept { return gram_; }
  [[nodiscard]] tied::label_form label_form() const noexcept { return form_; }
  /// Bytes held by the arrays.
  [[nodiscard]] double bytes() const noexcept;

private:
  std::size_t count_ = 0;
  int T_ = 2;
  tied::label_form form_ = tied::label_form::seq2label;
  row_matrix tokens_, labels_, clean_, gram_;
};

/// Bytes a dataset of `count` sequences holds (tokens, both label arrays and, for seq2seq, the token
/// Gram matrices), without allocating.
[[nodiscard]] double dataset_bytes(std::size_t count, int T, std::size_t d,
                                   tied::label_form form = tied::label_form::seq2label) noexcept;

} // namespace slr::tied_erm
