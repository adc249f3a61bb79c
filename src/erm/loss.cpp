#include "slr/erm/loss.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "slr/model/parallel.hpp"
#include "vector_clones.hpp"

namespace slr::erm {
namespace {
constexpr std::size_t max_rows_per_group = 4; // rows whose dot products share one load of k, v

// Sequences per chunk of the deterministic reduction: a function of N only (never of the
// thread count); about 64 chunks, so that the per-chunk gradient buffers stay small.
std::size_t chunk_size(std::size_t sequences) { return std::max<std::size_t>(16, (sequences + 63) / 64); }

// χ_r = x_r·k and z_r = x_r·v for R consecutive rows of length D (unnormalised). The rows
// share each load of k_i, v_i; `omp simd reduction` lets the compiler vectorise the sums
// without -ffast-math (the summation order is fixed by the code, not by the thread count).
template <int R, class T>
SLR_ERM_INLINE void project_rows(const T* __restrict x, std::size_t D, const double* __restrict k, const double* __restrict v,
                  double* chi, double* z) {
  double c0 = 0, c1 = 0, c2 = 0, c3 = 0, z0 = 0, z1 = 0, z2 = 0, z3 = 0;
#pragma omp simd reduction(+ : c0, c1, c2, c3, z0, z1, z2, z3)
  for (std::size_t i = 0; i < D; ++i) {
    const double ki = k[i], vi = v[i];
    const double x0 = static_cast<double>(x[i]);
    c0 += x0 * ki;
    z0 += x0 * vi;
    if constexpr (R > 1) {
      const double x1 = static_cast<double>(x[D + i]);
      c1 += x1 * ki;
      z1 += x1 * vi;
    }
    if constexpr (R > 2) {
      const double x2 = static_cast<double>(x[2 * D + i]);
      c2 += x2 * ki;
      z2 += x2 * vi;
    }
    if constexpr (R > 3) {
      const double x3 = static_cast<double>(x[3 * D + i]);
      c3 += x3 * ki;
      z3 += x3 * vi;
    }
  }
  const double cs[4] = {c0, c1, c2, c3}, zs[4] = {z0, z1, z2, z3};
  for (int r = 0; r < R; ++r) {
    chi[r] = cs[r];
    z[r] = zs[r];
  }
}

// g_k += Σ_r a_r x_r and g_v += Σ_r b_r x_r over R consecutive rows (rows read from cache).
template <int R, class T>
SLR_ERM_INLINE void accumulate_rows(const T* __restrict x, std::size_t D, const double* a, const double* b,
                     double* __restrict gk, double* __restrict gv) {
  const double a0 = a[0], b0 = b[0];
  const double a1 = R > 1 ? a[1] : 0.0, b1 = R > 1 ? b[1] : 0.0;
  const double a2 = R > 2 ? a[2] : 0.0, b2 = R > 2 ? b[2] : 0.0;
  const double a3 = R > 3 ? a[3] : 0.0, b3 = R > 3 ? b[3] : 0.0;
#pragma omp simd
  for (std::size_t i = 0; i < D; ++i) {
    const double x0 = static_cast<double>(x[i]);
    double sk = gk[i] + a0 * x0;
    double sv = gv[i] + b0 * x0;
    if constexpr (R > 1) {
      const double x1 = static_cast<double>(x[D + i]);
      sk += a1 * x1;
      sv += b1 * x1;
    }
    if constexpr (R > 2) {
      const double x2 = static_cast<double>(x[2 * D + i]);
      sk += a2 * x2;
      sv += b2 * x2;
    }
    if constexpr (R > 3) {
      const double x3 = static_cast<double>(x[3 * D + i]);
      sk += a3 * x3;
      sv += b3 * x3;
    }
    gk[i] = sk;
    gv[i] = sv;
  }
}

template <class T>
SLR_ERM_INLINE void project(const T* x, std::size_t L, std::size_t D, const double* k, const double* v, double* chi, double* z) {
  for (std::size_t l = 0; l < L; l += max_rows_per_group) {
    const T* rows = x + l * D;
    switch (std::min(max_rows_per_group, L - l)) {
    case 1: project_rows<1>(rows, D, k, v, chi + l, z + l); break;
    case 2: project_rows<2>(rows, D, k, v, chi + l, z + l); break;
    case 3: project_rows<3>(rows, D, k, v, chi + l, z + l); break;
    default: project_rows<4>(rows, D, k, v, chi + l, z + l); break;
    }
  }
}

template <class T>
SLR_ERM_INLINE void accumulate(const T* x, std::size_t L, std::size_t D, const double* a, const double* b, double* gk, double* gv) {
  for (std::size_t l = 0; l < L; l += max_rows_per_group) {
    const T* rows = x + l * D;
    switch (std::min(max_rows_per_group, L - l)) {
    case 1: accumulate_rows<1>(rows, D, a + l, b + l, gk, gv); break;
    case 2: accumulate_rows<2>(rows, D, a + l, b + l, gk, gv); break;
    case 3: accumulate_rows<3>(rows, D, a + l, b + l, gk, gv); break;
    default: accumulate_rows<4>(rows, D, a + l, b + l, gk, gv); break;
    }
  }
}

struct gradient_partial {
  std::vector<double> gradient; // [g_k; g_v], empty when only the loss is wanted
  double loss = 0;
  gradient_partial& operator+=(const gradient_partial& other) {
    for (std::size_t i = 0; i < gradient.size(); ++i) gradient[i] += other.gradient[i];
    loss += other.loss;
    return *this;
  }
};

struct error_partial {
  double sum = 0, sum_squares = 0;
  error_partial& operator+=(const error_partial& other) {
    sum += other.sum;
    sum_squares += other.sum_squares;
    return *this;
  }
};

// Per-thread scratch of one sequence (L ≤ max_length).
struct sequence_scratch {
  explicit sequence_scratch(std::size_t L) : chi(L), z(L), sigma(L), jt(L), a(L), b(L) {}
  std::vector<double> chi, z, sigma, jt, a, b;
};

// Sums over a range of sequences of the residual r = f − y.
struct residual_sums {
  double half_square = 0; // Σ ½r²
  double square = 0;      // Σ r²
  double fourth = 0;      // Σ r⁴
};

// Streams sequences [begin, end): the residual of each, and with a gradient buffer the gradient
// of ½r² accumulated into it.
template <class T>
SLR_ERM_INLINE void stream_sequences(const sequence_data& data, const T* tokens, const model::activation& activation,
                                     const double* k, const double* v, std::size_t begin, std::size_t end,
                                     double* gradient, residual_sums& sums) {
  const std::size_t D = data.dimension();
  const std::size_t Lmax = data.max_length();
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(D));
  sequence_scratch s(Lmax);
  for (std::size_t mu = begin; mu < end; ++mu) {
    const std::size_t L = data.length(mu);
    const T* x = tokens + mu * Lmax * D;
    project(x, L, D, k, v, s.chi.data(), s.z.data());
    for (std::size_t l = 0; l < L; ++l) {
      s.chi[l] *= inv_sqrt_d;
      s.z[l] *= inv_sqrt_d;
    }
    const std::span<const double> chi(s.chi.data(), L), z(s.z.data(), L);
    const std::span<double> sigma(s.sigma.data(), L), jt(s.jt.data(), L);
    if (gradient != nullptr)
      activation.vector_jacobian(chi, z, sigma, jt); // jt = Jᵀz = ∂f/∂χ
    else
      activation.evaluate(chi, sigma);
    double f = 0;
    for (std::size_t l = 0; l < L; ++l) f += sigma[l] * z[l];
    const double residual = f - data.label(mu);
    const double square = residual * residual;
    sums.half_square += 0.5 * square;
    sums.square += square;
    sums.fourth += square * square;
    if (gradient != nullptr) {
      // ∂(½r²)/∂k = r Σ_l (Jᵀz)_l x_l/√D,  ∂(½r²)/∂v = r Σ_l σ_l x_l/√D.
      const double scale = residual * inv_sqrt_d;
      for (std::size_t l = 0; l < L; ++l) {
        s.a[l] = scale * jt[l];
        s.b[l] = scale * sigma[l];
      }
      accumulate(x, L, D, s.a.data(), s.b.data(), gradient, gradient + D); // the block is still in cache
    }
  }
}

// The per-instruction-set entry points (see vector_clones.hpp).
SLR_ERM_VECTOR_CLONES void stream_range(const sequence_data& data, const double* tokens,
                                        const model::activation& activation, const double* k, const double* v,
                                        std::size_t begin, std::size_t end, double* gradient, residual_sums& sums) {
  stream_sequences(data, tokens, activation, k, v, begin, end, gradient, sums);
}
SLR_ERM_VECTOR_CLONES void stream_range(const sequence_data& data, const float* tokens,
                                        const model::activation& activation, const double* k, const double* v,
                                        std::size_t begin, std::size_t end, double* gradient, residual_sums& sums) {
  stream_sequences(data, tokens, activation, k, v, begin, end, gradient, sums);
}

template <class Fn>
decltype(auto) with_tokens(const sequence_data& data, Fn&& fn) {
  if (data.tokens_f64() != nullptr) return fn(data.tokens_f64());
  return fn(data.tokens_f32());
}
} // namespace

empirical_risk::empirical_risk(const sequence_data& data, const model::activation_spec& activation, double r_k,
                               double r_v, unsigned threads)
    : data_(data), activation_(model::make_activation(activation)), r_k_(r_k), r_v_(r_v), threads_(threads) {
  if (!(r_k >= 0) || !std::isfinite(r_k)) throw std::invalid_argument("r_k must be finite and >= 0");
  if (!(r_v >= 0) || !std::isfinite(r_v)) throw std::invalid_argument("r_v must be finite and >= 0");
}

empirical_risk::~empirical_risk() = default;

loss_value empirical_risk::evaluate(const Eigen::VectorXd& w, Eigen::VectorXd& gradient) const {
  const std::size_t D = dimension();
  if (static_cast<std::size_t>(w.size()) != 2 * D)
    throw std::invalid_argument("parameter vector has size " + std::to_string(w.size()) + ", expected 2D = " +
                                std::to_string(2 * D));
  gradient_partial init;
  init.gradient.assign(2 * D, 0.0);
  const auto total = model::chunked_reduce(
      data_.size(), chunk_size(data_.size()), threads_, init,
      [&](std::size_t begin, std::size_t end, gradient_partial& acc) {
        with_tokens(data_, [&](const auto* tokens) {
          residual_sums sums;
          stream_range(data_, tokens, *activation_, w.data(), w.data() + D, begin, end, acc.gradient.data(), sums);
          acc.loss += sums.half_square;
        });
      });
  gradient.resize(static_cast<Eigen::Index>(2 * D));
  const auto Di = static_cast<Eigen::Index>(D);
  gradient.head(Di) = Eigen::Map<const Eigen::VectorXd>(total.gradient.data(), Di) + r_k_ * w.head(Di);
  gradient.tail(Di) = Eigen::Map<const Eigen::VectorXd>(total.gradient.data() + D, Di) + r_v_ * w.tail(Di);
  return {total.loss, total.loss + 0.5 * r_k_ * w.head(Di).squaredNorm() + 0.5 * r_v_ * w.tail(Di).squaredNorm()};
}

loss_value empirical_risk::evaluate(const Eigen::VectorXd& w) const {
  const auto errors = squared_errors(w);
  const auto Di = static_cast<Eigen::Index>(dimension());
  const double loss = 0.5 * errors.sum;
  return {loss, loss + 0.5 * r_k_ * w.head(Di).squaredNorm() + 0.5 * r_v_ * w.tail(Di).squaredNorm()};
}

empirical_risk::squared_error empirical_risk::squared_errors(const Eigen::VectorXd& w) const {
  const std::size_t D = dimension();
  if (static_cast<std::size_t>(w.size()) != 2 * D)
    throw std::invalid_argument("parameter vector has size " + std::to_string(w.size()) + ", expected 2D = " +
                                std::to_string(2 * D));
  const auto total = model::chunked_reduce(
      data_.size(), chunk_size(data_.size()), threads_, error_partial{},
      [&](std::size_t begin, std::size_t end, error_partial& acc) {
        with_tokens(data_, [&](const auto* tokens) {
          residual_sums sums;
          stream_range(data_, tokens, *activation_, w.data(), w.data() + D, begin, end, nullptr, sums);
          acc.sum += sums.square;
          acc.sum_squares += sums.fourth;
        });
      });
  squared_error out;
  const auto n = static_cast<double>(data_.size());
  out.sum = total.sum;
  out.sum_squares = total.sum_squares;
  out.mean = total.sum / n;
  const double variance = n > 1 ? std::max(0.0, (total.sum_squares - n * out.mean * out.mean) / (n - 1)) : 0.0;
  out.stderr = std::sqrt(variance / n);
  return out;
}

empirical_risk::squared_error fresh_test_risk(const model::problem& problem, const teacher& teacher,
                                              const Eigen::VectorXd& w, std::size_t samples, std::uint64_t seed,
                                              precision storage, unsigned threads) {
  if (samples == 0) throw std::invalid_argument("the number of test sequences must be >= 1");
  // Blocks of ~64 MB of tokens (at least 64 sequences): memory stays bounded and each block
  // is generated and evaluated with all threads. Sums are combined in block order.
  const double per_sequence = token_bytes(1, problem.lengths.max_length(), teacher.dimension(), storage);
  const auto block = std::max<std::size_t>(64, static_cast<std::size_t>(64e6 / per_sequence));
  empirical_risk::squared_error total;
  for (std::size_t first = 0; first < samples; first += block) {
    const std::size_t count = std::min(block, samples - first);
    const auto data = sequence_data::generate(problem, teacher, count, seed, model::stream_purpose::test_data,
                                              storage, threads, first);
    const empirical_risk risk(data, problem.activation, 0.0, 0.0, threads);
    const auto part = risk.squared_errors(w);
    total.sum += part.sum;
    total.sum_squares += part.sum_squares;
  }
  const auto n = static_cast<double>(samples);
  total.mean = total.sum / n;
  const double variance = n > 1 ? std::max(0.0, (total.sum_squares - n * total.mean * total.mean) / (n - 1)) : 0.0;
  total.stderr = std::sqrt(variance / n);
  return total;
}

} // namespace slr::erm
