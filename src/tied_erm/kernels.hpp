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
/// the sequence's first row (T rows of length d), h is T×T row-major.
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

/// Sequences per block of a pass over a dataset: the scratch is O(block·T·d) whatever n is, and
/// each BLAS call (block·T rows) stays large enough to run at full speed.
inline constexpr std::size_t block_sequences = 2048;

} // namespace slr::tied_erm::detail
