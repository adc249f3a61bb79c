#include "kernels.hpp"

#include <algorithm>
#include <cmath>

#include <cblas.h>

// Function multiversioning of the per-sequence loops: the portable build targets baseline x86-64
// (SSE2); with GCC on x86-64 Linux process_block is also compiled for x86-64-v3 (AVX2/FMA) and
// x86-64-v4 (AVX-512) and the loader picks the best for the running CPU. Its helpers are
// force-inlined so that each clone vectorises them.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && !defined(__AVX2__)
#define SLR_TIED_ERM_VECTOR_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define SLR_TIED_ERM_VECTOR_CLONES
#endif
#define SLR_TIED_ERM_INLINE [[gnu::always_inline]] inline

namespace slr::tied_erm::detail {

namespace {

SLR_TIED_ERM_INLINE double dot(const double* __restrict a, const double* __restrict b, std::size_t n) noexcept {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (std::size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// out = Σ_a c_a x_a over the T token rows x of a sequence.
SLR_TIED_ERM_INLINE void combine_rows(const double* __restrict x, const double* c, int T, std::size_t d,
                                      double* __restrict out) noexcept {
  const double c0 = c[0];
#pragma omp simd
  for (std::size_t i = 0; i < d; ++i) out[i] = c0 * x[i];
  for (int a = 1; a < T; ++a) {
    const double ca = c[a];
    const double* __restrict xa = x + static_cast<std::size_t>(a) * d;
#pragma omp simd
    for (std::size_t i = 0; i < d; ++i) out[i] += ca * xa[i];
  }
}

// u = K r for a sequence's token Gram matrix K (T×T row-major, seq2seq), u = r where K is null
// (seq2label): the weight of a residual row in the loss r·u.
SLR_TIED_ERM_INLINE void gram_weighted(const double* K, const double* r, int T, double* u) noexcept {
  if (K == nullptr) {
    for (int b = 0; b < T; ++b) u[b] = r[b];
    return;
  }
  for (int b = 0; b < T; ++b) {
    double s = 0;
    for (int c = 0; c < T; ++c) s += K[b * T + c] * r[c];
    u[b] = s;
  }
}

} // namespace

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

SLR_TIED_ERM_VECTOR_CLONES void process_block(const block_input& in, block_output& out) noexcept {
  const int T = in.T;
  const auto Tz = static_cast<std::size_t>(T);
  const std::size_t d = in.d;
  static_assert(tied::max_tokens * tied::max_tokens <= 256 && tied::max_tokens <= 16, "the per-sequence scratch holds T x T fields");
  double h[256], p[256], G[256], V[256], w[16], c[16];
  const double two_beta = 2 * in.beta;
  out.positive = out.negative = 0;
  for (std::size_t j = 0; j < in.sequences; ++j) {
    const double* x = in.X + j * Tz * d;
    const double* P = in.P + j * Tz * d;
    for (int a = 0; a < T; ++a)
      for (int b = a; b < T; ++b) {
        double s = dot(P + static_cast<std::size_t>(a) * d, x + static_cast<std::size_t>(b) * d, d);
        if (a == b) s -= in.trace;
        h[a * T + b] = h[b * T + a] = s * in.inv_sqrt_d;
      }
    double error = 0, error_clean = 0;
    const double* K = in.gram != nullptr ? in.gram + j * Tz * Tz : nullptr;
    for (int a = 0; a < T; ++a) {
      double* pa = p + a * T;
      softmax_row(h + a * T, T, in.beta, pa);
      const double* y = in.labels + (j * Tz + static_cast<std::size_t>(a)) * Tz;
      double r[16], u[16];
      for (int b = 0; b < T; ++b) r[b] = pa[b] - y[b];
      // u = ½ ∂ℓ/∂p_a: r_a for seq2label, K r_a for seq2seq (K symmetric).
      gram_weighted(K, r, T, u);
      double s = 0;
      for (int b = 0; b < T; ++b) {
        error += r[b] * u[b];
        s += pa[b] * u[b];
      }
      // ∂ℓ/∂h_ab = 2β p_b (u_b − pᵀu) (softmax Jacobian diag p − p pᵀ).
      for (int b = 0; b < T; ++b) G[a * T + b] = two_beta * pa[b] * (u[b] - s);
      if (in.clean_out != nullptr) {
        const double* yc = in.clean + (j * Tz + static_cast<std::size_t>(a)) * Tz;
        for (int b = 0; b < T; ++b) r[b] = pa[b] - yc[b];
        gram_weighted(K, r, T, u);
        for (int b = 0; b < T; ++b) error_clean += r[b] * u[b];
      }
    }
    const double sum = out.loss + error; // Neumaier
    out.compensation += std::abs(out.loss) >= error ? (out.loss - sum) + error : (error - sum) + out.loss;
    out.loss = sum;
    if (in.noisy_out != nullptr) in.noisy_out[j] = error;
    if (in.clean_out != nullptr) in.clean_out[j] = error_clean;
    if (in.Y == nullptr) continue;

    for (int a = 0; a < T; ++a) {
      out.trace_G += G[a * T + a];
      for (int b = a; b < T; ++b) G[a * T + b] = G[b * T + a] = 0.5 * (G[a * T + b] + G[b * T + a]) * in.inv_sqrt_d;
    }
    symmetric_eigen(T, G, V, w);
    for (int e = 0; e < T; ++e) {
      const double gamma = w[e];
      if (gamma == 0) continue;
      double* row = in.Y + (gamma > 0 ? out.positive++ : in.Y_rows - 1 - out.negative++) * d;
      const double scale = std::sqrt(std::abs(gamma));
      for (int a = 0; a < T; ++a) c[a] = scale * V[a * T + e];
      combine_rows(x, c, T, d, row);
    }
  }
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
