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

} // namespace slr::tied_erm::detail
