#pragma once
// The 7 order parameters of an attention predictor (docs/theory.md §0), all normalised by D:
//   M (teacher × student) = [[m_kk, m_vk], [m_kv, m_vv]]  with m_kk = k*·k/D, m_vk = k*·v/D,
//                                                          m_kv = v*·k/D, m_vv = v*·v/D;
//   Q (student Gram)      = [[q_kk, q_kv], [q_kv, q_vv]];
//   residual R = Q − MᵀM, which must be positive semi-definite.
// The manifold 𝓜 is m_kv = m_vk = q_kv = 0.
#include <Eigen/Core>

namespace slr::model {

struct order_parameters {
  double m_kk = 0, m_kv = 0, m_vk = 0, m_vv = 0;
  double q_kk = 0, q_kv = 0, q_vv = 0;

  /// On 𝓜 with the given diagonal overlaps and residual variances R_kk, R_vv ≥ 0.
  static order_parameters on_manifold(double m_kk, double r_kk, double m_vv, double r_vv);
  static order_parameters from_matrices(const Eigen::Matrix2d& M, const Eigen::Matrix2d& Q);

  [[nodiscard]] Eigen::Matrix2d M() const;
  [[nodiscard]] Eigen::Matrix2d Q() const;
  /// R = Q − MᵀM.
  [[nodiscard]] Eigen::Matrix2d residual() const;
  [[nodiscard]] bool is_on_manifold(double tolerance = 0.0) const noexcept;
  /// True if R has no eigenvalue below −tolerance·max(1, |Q|).
  [[nodiscard]] bool is_admissible(double tolerance = 1e-10) const;

  friend bool operator==(const order_parameters&, const order_parameters&) = default;
};

/// Symmetric square root of a 2×2 positive semi-definite matrix; eigenvalues in [−tol, 0) are
/// clipped to 0. Throws std::invalid_argument if an eigenvalue is below −tolerance·max(1, |A|).
[[nodiscard]] Eigen::Matrix2d psd_sqrt(const Eigen::Matrix2d& A, double tolerance = 1e-10);

} // namespace slr::model
