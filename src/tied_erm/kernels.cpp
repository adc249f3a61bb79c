#include "kernels.hpp"

#include <algorithm>
#include <cmath>

#include <cblas.h>

namespace slr::tied_erm::detail {

void multiply_tokens(const row_matrix& X, std::size_t first, std::size_t rows, const Eigen::MatrixXd& S,
                     double* P) noexcept {
  if (rows == 0) return;
  const auto d = static_cast<int>(X.cols()); // sizes are checked < 2^31 where the data is made
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), d, d, 1.0,
              X.data() + first * X.cols(), d, S.data(), d, 0.0, P, d);
}

void softmax_row(const double* g, int T, double beta, double* p) noexcept {
  double top = g[0];
  for (int i = 1; i < T; ++i) top = std::max(top, g[i]);
  double sum = 0;
  for (int i = 0; i < T; ++i) sum += (p[i] = std::exp(beta * (g[i] - top)));
  const double inv = 1.0 / sum;
  for (int i = 0; i < T; ++i) p[i] *= inv;
}

void symmetric_eigen(int T, double* A, double* V, double* w) noexcept {
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) V[i * T + j] = i == j ? 1.0 : 0.0;
  for (int sweep = 0; sweep < 50; ++sweep) {
    double off = 0, diag = 0;
    for (int p = 0; p < T; ++p) {
      diag += A[p * T + p] * A[p * T + p];
      for (int q = p + 1; q < T; ++q) off += A[p * T + q] * A[p * T + q];
    }
    if (off <= 1e-32 * diag || off == 0) break;
    for (int p = 0; p < T; ++p)
      for (int q = p + 1; q < T; ++q) {
        const double apq = A[p * T + q];
        if (apq == 0) continue;
        // Rotation in the (p, q) plane that zeroes A_pq: t = tan φ is the smaller root of
        // t² + 2θt − 1 = 0, θ = (A_qq − A_pp)/(2 A_pq) (stable for every θ).
        const double theta = (A[q * T + q] - A[p * T + p]) / (2 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < T; ++k) { // columns: A ← A J
          const double akp = A[k * T + p], akq = A[k * T + q];
          A[k * T + p] = c * akp - s * akq;
          A[k * T + q] = s * akp + c * akq;
        }
        for (int k = 0; k < T; ++k) { // rows: A ← Jᵀ A
          const double apk = A[p * T + k], aqk = A[q * T + k];
          A[p * T + k] = c * apk - s * aqk;
          A[q * T + k] = s * apk + c * aqk;
        }
        A[p * T + q] = A[q * T + p] = 0;
        for (int k = 0; k < T; ++k) { // V ← V J
          const double vkp = V[k * T + p], vkq = V[k * T + q];
          V[k * T + p] = c * vkp - s * vkq;
          V[k * T + q] = s * vkp + c * vkq;
        }
      }
  }
  for (int i = 0; i < T; ++i) w[i] = A[i * T + i];
}

} // namespace slr::tied_erm::detail
