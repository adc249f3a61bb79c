#include "slr/model/order_parameters.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <stdexcept>

namespace slr::model {

order_parameters order_parameters::on_manifold(double m_kk, double r_kk, double m_vv, double r_vv) {
  if (r_kk < 0 || r_vv < 0) throw std::invalid_argument("residual variances must be >= 0");
  order_parameters op;
  op.m_kk = m_kk;
  op.m_vv = m_vv;
  op.q_kk = m_kk * m_kk + r_kk;
  op.q_vv = m_vv * m_vv + r_vv;
  return op;
}

order_parameters order_parameters::from_matrices(const Eigen::Matrix2d& M, const Eigen::Matrix2d& Q) {
  order_parameters op;
  op.m_kk = M(0, 0);
  op.m_vk = M(0, 1);
  op.m_kv = M(1, 0);
  op.m_vv = M(1, 1);
  op.q_kk = Q(0, 0);
  op.q_kv = 0.5 * (Q(0, 1) + Q(1, 0));
  op.q_vv = Q(1, 1);
  return op;
}

Eigen::Matrix2d order_parameters::M() const {
  Eigen::Matrix2d m;
  m << m_kk, m_vk, m_kv, m_vv;
  return m;
}

Eigen::Matrix2d order_parameters::Q() const {
  Eigen::Matrix2d q;
  q << q_kk, q_kv, q_kv, q_vv;
  return q;
}

Eigen::Matrix2d order_parameters::residual() const {
  const Eigen::Matrix2d m = M();
  return Q() - m.transpose() * m;
}

bool order_parameters::is_on_manifold(double tolerance) const noexcept {
  return std::abs(m_kv) <= tolerance && std::abs(m_vk) <= tolerance && std::abs(q_kv) <= tolerance;
}

bool order_parameters::is_admissible(double tolerance) const {
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eig(residual(), Eigen::EigenvaluesOnly);
  const double scale = std::max(1.0, Q().cwiseAbs().maxCoeff());
  return eig.eigenvalues().minCoeff() >= -tolerance * scale;
}

Eigen::Matrix2d psd_sqrt(const Eigen::Matrix2d& A, double tolerance) {
  const Eigen::Matrix2d sym = 0.5 * (A + A.transpose());
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eig(sym);
  const double scale = std::max(1.0, sym.cwiseAbs().maxCoeff());
  Eigen::Vector2d lambda = eig.eigenvalues();
  if (lambda.minCoeff() < -tolerance * scale)
    throw std::invalid_argument("matrix is not positive semi-definite (eigenvalue " +
                                std::to_string(lambda.minCoeff()) + ")");
  lambda = lambda.cwiseMax(0.0).cwiseSqrt();
  return eig.eigenvectors() * lambda.asDiagonal() * eig.eigenvectors().transpose();
}

} // namespace slr::model
