#pragma once
// Shared inner pieces of the tied-attention ERM (not installed): the token-times-S product as one
// BLAS call, the T×T fields of a sequence and the row softmax.
#include <cstddef>

#include <Eigen/Core>

#include "slr/tied_erm/data.hpp"

namespace slr::tied_erm::detail {

/// P[0:rows) = X[first:first+rows) · S for symmetric S (one dgemm; S's column-major storage read
/// as row-major is Sᵀ = S). P must have at least `rows` rows and X.cols() columns.
void multiply_tokens(const row_matrix& X, std::size_t first, std::size_t rows, const Eigen::MatrixXd& S,
                     double* P) noexcept;

/// Fields of one sequence: h_ab = (P_a·x_b − δ_ab trace)/√d for a ≤ b, mirrored; X and P point at
/// the sequence's first row (T rows of length d), h is T×T row-major. (Data generation; the passes
/// of the risk compute the same inside process_block.)
inline void sequence_fields(const double* X, const double* P, int T, std::size_t d, double trace,
                            double inv_sqrt_d, double* h) noexcept {
  for (int a = 0; a < T; ++a) {
    const double* pa = P + static_cast<std::size_t>(a) * d;
    for (int b = a; b < T; ++b) {
      const double* xb = X + static_cast<std::size_t>(b) * d;
      double s = 0;
      for (std::size_t i = 0; i < d; ++i) s += pa[i] * xb[i];
      if (a == b) s -= trace;
      h[a * T + b] = h[b * T + a] = s * inv_sqrt_d;
    }
  }
}

/// p = softmax(β g) over T entries (max subtracted first).
void softmax_row(const double* g, int T, double beta, double* p) noexcept;

/// Eigen-decomposition of a small symmetric T×T matrix (row-major A, overwritten): A = V diag(w) Vᵀ
/// with V row-major, column j the eigenvector of w[j]. Cyclic Jacobi rotations (T = 2: one
/// rotation, exact); T ≤ 16.
void symmetric_eigen(int T, double* A, double* V, double* w) noexcept;

/// One block of sequences of a pass over a dataset (pointers at the block's first row).
struct block_input {
  const double* X = nullptr;      ///< tokens, (sequences·T) × d row-major
  const double* P = nullptr;      ///< X·S, same shape
  const double* labels = nullptr; ///< noisy label rows, (sequences·T) × T
  const double* clean = nullptr;  ///< clean label rows; read only if clean_out is set
  const double* gram = nullptr;   ///< seq2seq: rows of K_μ = X_μX_μᵀ/d, (sequences·T) × T; null: seq2label
  std::size_t sequences = 0, d = 0;
  int T = 2;
  double trace = 0, inv_sqrt_d = 0, beta = 1;
  double* Y = nullptr;            ///< gradient rows, Y_rows × d; null: no gradient
  std::size_t Y_rows = 0;
  double* noisy_out = nullptr;    ///< per-sequence errors against the labels (optional)
  double* clean_out = nullptr;    ///< per-sequence errors against the clean labels (optional)
};

/// Running results of a pass: the compensated loss sum, Σ tr G_μ, and the rows written to Y
/// (γ > 0 from the top, γ < 0 from the bottom).
struct block_output {
  double loss = 0, compensation = 0, trace_G = 0;
  std::size_t positive = 0, negative = 0;
};

/// Per-sequence work of a block: fields h_ab = (P_a·x_b − δ_ab trace)/√d, softmax rows A, errors
/// (seq2label ‖A − Y‖²_F; seq2seq ‖(A − Y)X‖²_F/d = Σ_a r_a K r_aᵀ with r = A − Y),
/// and with Y the rank-one rows √|γ_j| X_μᵀv_j of sym(G_μ)/√d = Σ γ_j v_j v_jᵀ, G_μ = ∂ℓ_μ/∂h.
/// Adds to `out` (loss, trace_G); resets and sets positive/negative for this block.
void process_block(const block_input& in, block_output& out) noexcept;

/// Sequences per block of a pass over a dataset: the scratch is O(block·T·d) whatever n is, and
/// each BLAS call (block·T rows) stays large enough to run at full speed.
inline constexpr std::size_t block_sequences = 2048;

} // namespace slr::tied_erm::detail
