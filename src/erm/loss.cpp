#include "slr/erm/loss.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "slr/model/parallel.hpp"
#include "vector_clones.hpp"

namespace slr::erm {
namespace {
constexpr std::size_t max_rows_per_group = 4; // rows whose products share one load of k, v (or g_k, g_v)

// Sequences per chunk of the deterministic reduction: a function of N only (never of the
// thread count); about 64 chunks, so that the per-chunk gradient buffers stay small.
std::size_t chunk_size(std::size_t sequences) { return std::max<std::size_t>(16, (sequences + 63) / 64); }

// The row kernels work on explicit vectors of W doubles (a GCC/Clang extension): W = 8 (one zmm
// register) with AVX-512, W = 4 (one ymm, or two xmm) otherwise, so that the accumulators of
// the fused loop fit in the register file. Entry i of a row always goes to lane i mod W and the
// last D mod W entries to a scalar tail, whatever the alignment of the tokens, the grouping of
// sequences or the thread count, so every sum has a fixed order for a given W.
template <int W>
struct simd;
template <>
struct simd<4> {
  using vec = double __attribute__((vector_size(4 * sizeof(double))));
  using vecf = float __attribute__((vector_size(4 * sizeof(float))));
};
template <>
struct simd<8> {
  using vec = double __attribute__((vector_size(8 * sizeof(double))));
  using vecf = float __attribute__((vector_size(8 * sizeof(float))));
};

// The vectors cross no ABI boundary (the helpers are always inlined), so GCC's note that their
// calling convention depends on AVX-512 does not apply; it is reported at the end of the file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
template <int W>
SLR_ERM_INLINE typename simd<W>::vec load(const double* p) {
  typename simd<W>::vec r;
  std::memcpy(&r, p, sizeof r);
  return r;
}
template <int W>
SLR_ERM_INLINE typename simd<W>::vec load(const float* p) { // float tokens are widened in registers, once per load
  typename simd<W>::vecf r;
  std::memcpy(&r, p, sizeof r);
  return __builtin_convertvector(r, typename simd<W>::vec);
}
template <class V> // by reference: a 64-byte vector by value draws GCC's -Wpsabi note (always inlined anyway)
SLR_ERM_INLINE void store(double* p, const V& v) { std::memcpy(p, &v, sizeof v); }

// The W lanes of a partial sum, added in a fixed order (pairwise).
template <int W>
SLR_ERM_INLINE double lane_sum(const double* v) {
  if constexpr (W == 4)
    return (v[0] + v[1]) + (v[2] + v[3]);
  else
    return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

// Lane accumulators of one sequence: per row l, the W lanes of x_l·k then the W of x_l·v.
template <int W>
SLR_ERM_INLINE std::size_t acc_offset(std::size_t row) { return 2 * row * W; }

// First pass over entries [i0, i1) (multiples of W apart) of R consecutive rows of length D: the lanes
// of x_r·k and x_r·v are added to acc. The rows share each load of k and v.
template <int W, int R, class T>
SLR_ERM_INLINE void project_rows(const T* __restrict x, std::size_t D, const double* __restrict k,
                                 const double* __restrict v, std::size_t i0, std::size_t i1, double* acc) {
  typename simd<W>::vec c[R], z[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) c[r] = load<W>(acc + acc_offset<W>(r)), z[r] = load<W>(acc + acc_offset<W>(r) + W);
  for (std::size_t i = i0; i < i1; i += W) {
    const typename simd<W>::vec ki = load<W>(k + i), vi = load<W>(v + i);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const typename simd<W>::vec xr = load<W>(x + r * D + i);
      c[r] += xr * ki;
      z[r] += xr * vi;
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) store(acc + acc_offset<W>(r), c[r]), store(acc + acc_offset<W>(r) + W, z[r]);
}

// Second pass over entries [i0, i1): g_k += Σ_r a_r x_r and g_v += Σ_r b_r x_r
// over R consecutive rows, added row after row to each entry.
template <int W, int R, class T>
SLR_ERM_INLINE void accumulate_rows(const T* __restrict x, std::size_t D, const double* a, const double* b,
                                    double* __restrict gk, double* __restrict gv, std::size_t i0,
                                    std::size_t i1) {
  double as[R], bs[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) as[r] = a[r], bs[r] = b[r];
  for (std::size_t i = i0; i < i1; i += W) {
    typename simd<W>::vec sk = load<W>(gk + i), sv = load<W>(gv + i);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const typename simd<W>::vec xr = load<W>(x + r * D + i);
      sk += as[r] * xr;
      sv += bs[r] * xr;
    }
    store(gk + i, sk);
    store(gv + i, sv);
  }
}

// How far ahead of the fused loop the streamed rows are prefetched (into all cache levels: they
// are re-read by the next group's gradient pass). The loop streams G·R rows at once, more
// concurrent streams than the hardware prefetcher of some cores follows; on an AMD EPYC
// (Zen 4, 1 MB L2) explicit prefetch 512 bytes ahead took the loss + gradient at D = N = 10⁴ from
// 223 to 197 ms (f64) and from 114 to 109 ms (f32), medians of five; 256 bytes was slower than
// none, 1–4 KB about the same as 512 (tests/bench/README.md). A prefetch changes no arithmetic, and one past
// the end of the tokens is harmless (prefetches never fault).
constexpr std::size_t prefetch_bytes = 512;
template <class T>
constexpr std::size_t prefetch_entries = prefetch_bytes / sizeof(T);

// The second pass over G sequences of R rows (x, already in cache) fused with the first pass over
// the next G sequences of R rows (y, streamed from memory); consecutive sequences are `stride`
// entries apart. Memory keeps streaming while the gradient is accumulated, and each load of k,
// v, g_k and g_v serves G sequences. Sums have the order of project_rows and accumulate_rows:
// gradient entries take the sequences in order, and in each the rows in order.
template <int W, int G, int R, class T>
SLR_ERM_INLINE void fused_rows(const T* __restrict x, const double* a, const double* b, std::size_t coef_stride,
                               double* __restrict gk, double* __restrict gv, const T* __restrict y,
                               std::size_t stride, std::size_t D, const double* __restrict k,
                               const double* __restrict v, std::size_t i0, std::size_t i1, double* acc,
                               std::size_t acc_stride) {
  double as[G][R], bs[G][R];
  typename simd<W>::vec c[G][R], z[G][R];
#pragma GCC unroll 4
  for (int s = 0; s < G; ++s)
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      as[s][r] = a[s * coef_stride + r], bs[s][r] = b[s * coef_stride + r];
      c[s][r] = load<W>(acc + s * acc_stride + acc_offset<W>(r));
      z[s][r] = load<W>(acc + s * acc_stride + acc_offset<W>(r) + W);
    }
  for (std::size_t i = i0; i < i1; i += W) {
    const typename simd<W>::vec ki = load<W>(k + i), vi = load<W>(v + i);
    typename simd<W>::vec sk = load<W>(gk + i), sv = load<W>(gv + i);
#pragma GCC unroll 4
    for (int s = 0; s < G; ++s)
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) __builtin_prefetch(y + s * stride + r * D + i + prefetch_entries<T>, 0, 3);
#pragma GCC unroll 4
    for (int s = 0; s < G; ++s)
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const typename simd<W>::vec xr = load<W>(x + s * stride + r * D + i), yr = load<W>(y + s * stride + r * D + i);
        sk += as[s][r] * xr;
        sv += bs[s][r] * xr;
        c[s][r] += yr * ki;
        z[s][r] += yr * vi;
      }
    store(gk + i, sk);
    store(gv + i, sv);
  }
#pragma GCC unroll 4
  for (int s = 0; s < G; ++s)
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      store(acc + s * acc_stride + acc_offset<W>(r), c[s][r]);
      store(acc + s * acc_stride + acc_offset<W>(r) + W, z[s][r]);
    }
}

// Both passes over one sequence of L rows, rows taken max_rows_per_group at a time.
template <int W, class T>
SLR_ERM_INLINE void project_sequence(const T* x, std::size_t L, std::size_t D, const double* k, const double* v,
                                     std::size_t i0, std::size_t i1, double* acc) {
  for (std::size_t l = 0; l < L; l += max_rows_per_group) {
    const T* rows = x + l * D;
    double* a = acc + acc_offset<W>(l);
    switch (std::min(max_rows_per_group, L - l)) {
    case 1: project_rows<W, 1>(rows, D, k, v, i0, i1, a); break;
    case 2: project_rows<W, 2>(rows, D, k, v, i0, i1, a); break;
    case 3: project_rows<W, 3>(rows, D, k, v, i0, i1, a); break;
    default: project_rows<W, 4>(rows, D, k, v, i0, i1, a); break;
    }
  }
}

template <int W, class T>
SLR_ERM_INLINE void accumulate_sequence(const T* x, std::size_t L, std::size_t D, const double* a, const double* b,
                                        double* gk, double* gv, std::size_t i0, std::size_t i1) {
  for (std::size_t l = 0; l < L; l += max_rows_per_group) {
    const T* rows = x + l * D;
    switch (std::min(max_rows_per_group, L - l)) {
    case 1: accumulate_rows<W, 1>(rows, D, a + l, b + l, gk, gv, i0, i1); break;
    case 2: accumulate_rows<W, 2>(rows, D, a + l, b + l, gk, gv, i0, i1); break;
    case 3: accumulate_rows<W, 3>(rows, D, a + l, b + l, gk, gv, i0, i1); break;
    default: accumulate_rows<W, 4>(rows, D, a + l, b + l, gk, gv, i0, i1); break;
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

// Sequences are streamed in groups of `fused_group`: while the gradient of one group is
// accumulated (its rows re-read from L2), the first pass runs over the next group (its rows read
// from memory) in the same loop. With L ≤ 4 rows in all of them this is fused_rows; otherwise
// (variable lengths) the two passes run one after the other. Which path a group takes depends on
// the lengths and on its place in the chunk (a function of N), never on the thread count; the
// two paths add the same terms in the same order (the compiler may contract the products of
// the two kernels into fused multiply-adds differently, a last-bit difference).
constexpr std::size_t fused_group = 2;

// k, v and the gradient of a chunk are copied into per-thread buffers aligned to 64 bytes, so
// that their vector loads never straddle two cache lines. (The token rows themselves usually
// start 16 bytes past a line; aligning the loops to them would make the lane of an entry, hence
// the rounding of the sums, depend on where the array was allocated.)
struct aligned_vectors {
  std::vector<double> storage;
  double *k = nullptr, *v = nullptr, *gk = nullptr, *gv = nullptr;
  void prepare(std::size_t D) {
    const std::size_t span = (D + 7) / 8 * 8; // entries per vector, whole lines
    storage.resize(4 * span + 8);
    const auto address = reinterpret_cast<std::uintptr_t>(storage.data());
    double* base = storage.data() + ((64 - address % 64) % 64) / sizeof(double);
    k = base, v = base + span, gk = base + 2 * span, gv = base + 3 * span;
  }
};

// Streams sequences [begin, end): the residual of each, and with a gradient buffer the gradient
// of ½r² accumulated into it.
template <int W, class T>
SLR_ERM_INLINE void stream_sequences(const sequence_data& data, const T* tokens, const model::activation& activation,
                                     const double* k_in, const double* v_in, std::size_t begin, std::size_t end,
                                     double* gradient, residual_sums& sums) {
  constexpr std::size_t G = fused_group;
  const std::size_t D = data.dimension();
  const std::size_t Lmax = data.max_length();
  const std::size_t stride = Lmax * D; // entries per sequence
  const std::size_t n = D / W * W; // entries in whole vectors, at lane i mod W; [n, D) is the scalar tail
  const std::size_t acc_stride = acc_offset<W>(Lmax);
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(D));

  thread_local aligned_vectors buffers;
  buffers.prepare(D);
  double *k = buffers.k, *v = buffers.v, *gk = buffers.gk, *gv = buffers.gv;
  std::copy(k_in, k_in + D, k);
  std::copy(v_in, v_in + D, v);
  if (gradient != nullptr) {
    std::fill(gk, gk + D, 0.0);
    std::fill(gv, gv + D, 0.0);
  }

  // Lane accumulators of the group in its first pass and of the group just finished, and the
  // gradient coefficients (a, b) of the group in its second pass, [sequence][row].
  std::vector<double> projecting(G * acc_stride), finished(G * acc_stride), coef_a(G * Lmax), coef_b(G * Lmax);
  sequence_scratch s(Lmax);
  const auto project_group = [&](std::size_t first, std::size_t last) {
    std::fill(projecting.begin(), projecting.end(), 0.0);
    for (std::size_t mu = first; mu < last; ++mu)
      project_sequence<W>(tokens + mu * stride, data.length(mu), D, k, v, 0, n,
                          projecting.data() + (mu - first) * acc_stride);
  };

  if (begin < end) project_group(begin, std::min(end, begin + G));
  for (std::size_t first = begin; first < end;) {
    const std::size_t last = std::min(end, first + G), next_last = std::min(end, last + G);
    std::swap(projecting, finished);
    for (std::size_t mu = first; mu < last; ++mu) {
      const std::size_t L = data.length(mu);
      const T* x = tokens + mu * stride;
      const double* acc = finished.data() + (mu - first) * acc_stride;
      for (std::size_t l = 0; l < L; ++l) {
        double chi_lanes[W], z_lanes[W];
        for (std::size_t t = 0; t < W; ++t) {
          chi_lanes[t] = acc[acc_offset<W>(l) + t];
          z_lanes[t] = acc[acc_offset<W>(l) + W + t];
        }
        double chi_tail = 0, z_tail = 0;
        for (std::size_t i = n; i < D; ++i) {
          chi_tail += static_cast<double>(x[l * D + i]) * k[i];
          z_tail += static_cast<double>(x[l * D + i]) * v[i];
        }
        s.chi[l] = (lane_sum<W>(chi_lanes) + chi_tail) * inv_sqrt_d;
        s.z[l] = (lane_sum<W>(z_lanes) + z_tail) * inv_sqrt_d;
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
          coef_a[(mu - first) * Lmax + l] = scale * jt[l];
          coef_b[(mu - first) * Lmax + l] = scale * sigma[l];
        }
      }
    }
    if (gradient == nullptr) {
      if (last < end) project_group(last, next_last);
      first = last;
      continue;
    }

    const std::size_t L = data.length(first);
    bool fuse = L <= max_rows_per_group && last - first == G && next_last - last == G;
    for (std::size_t mu = first; mu < next_last && fuse; ++mu) fuse = data.length(mu) == L;
    if (fuse) {
      std::fill(projecting.begin(), projecting.end(), 0.0);
      const T* x = tokens + first * stride;
      const T* y = tokens + last * stride;
      const double *a = coef_a.data(), *b = coef_b.data();
      double* acc = projecting.data();
      switch (L) {
      case 1: fused_rows<W, G, 1>(x, a, b, Lmax, gk, gv, y, stride, D, k, v, 0, n, acc, acc_stride); break;
      case 2: fused_rows<W, G, 2>(x, a, b, Lmax, gk, gv, y, stride, D, k, v, 0, n, acc, acc_stride); break;
      case 3: fused_rows<W, G, 3>(x, a, b, Lmax, gk, gv, y, stride, D, k, v, 0, n, acc, acc_stride); break;
      default: fused_rows<W, G, 4>(x, a, b, Lmax, gk, gv, y, stride, D, k, v, 0, n, acc, acc_stride); break;
      }
    } else {
      for (std::size_t mu = first; mu < last; ++mu)
        accumulate_sequence<W>(tokens + mu * stride, data.length(mu), D, coef_a.data() + (mu - first) * Lmax,
                            coef_b.data() + (mu - first) * Lmax, gk, gv, 0, n);
      if (last < end) project_group(last, next_last);
    }
    // The tail entries [n, D), sequence after sequence.
    for (std::size_t mu = first; mu < last; ++mu) {
      const T* x = tokens + mu * stride;
      const std::size_t rows_mu = data.length(mu);
      const double* a = coef_a.data() + (mu - first) * Lmax;
      const double* b = coef_b.data() + (mu - first) * Lmax;
      for (std::size_t i = n; i < D; ++i) {
        double sk = gk[i], sv = gv[i];
        for (std::size_t l = 0; l < rows_mu; ++l) {
          sk += a[l] * static_cast<double>(x[l * D + i]);
          sv += b[l] * static_cast<double>(x[l * D + i]);
        }
        gk[i] = sk;
        gv[i] = sv;
      }
    }
    first = last;
  }
  if (gradient != nullptr)
    for (std::size_t i = 0; i < D; ++i) {
      gradient[i] += gk[i];
      gradient[D + i] += gv[i];
    }
}

// The per-instruction-set entry points (see vector_clones.hpp): AVX-512 runs 8-lane vectors,
// AVX2 and the baseline 4-lane ones (the lane count fixes the summation order, so results are
// the same on every machine of one instruction-set level).
#define SLR_ERM_STREAM_ARGS                                                                                      \
  const sequence_data &data, const T *tokens, const model::activation &activation, const double *k,            \
      const double *v, std::size_t begin, std::size_t end, double *gradient, residual_sums &sums
#define SLR_ERM_STREAM_PASS data, tokens, activation, k, v, begin, end, gradient, sums
#if SLR_ERM_HAVE_CLONES
template <class T>
[[gnu::target("arch=x86-64-v4")]] SLR_ERM_KEEP_LOADS void stream_range_v4(SLR_ERM_STREAM_ARGS) {
  stream_sequences<8>(SLR_ERM_STREAM_PASS);
}
template <class T>
[[gnu::target("arch=x86-64-v3")]] SLR_ERM_KEEP_LOADS void stream_range_v3(SLR_ERM_STREAM_ARGS) {
  stream_sequences<4>(SLR_ERM_STREAM_PASS);
}
template <class T>
SLR_ERM_KEEP_LOADS void stream_range_baseline(SLR_ERM_STREAM_ARGS) {
  stream_sequences<4>(SLR_ERM_STREAM_PASS);
}
template <class T>
void stream_range(SLR_ERM_STREAM_ARGS) {
  static const auto kernel = __builtin_cpu_supports("x86-64-v4")   ? &stream_range_v4<T>
                             : __builtin_cpu_supports("x86-64-v3") ? &stream_range_v3<T>
                                                                   : &stream_range_baseline<T>;
  kernel(SLR_ERM_STREAM_PASS);
}
#else
template <class T>
SLR_ERM_KEEP_LOADS void stream_range(SLR_ERM_STREAM_ARGS) {
#if defined(__AVX512F__)
  stream_sequences<8>(SLR_ERM_STREAM_PASS);
#else
  stream_sequences<4>(SLR_ERM_STREAM_PASS);
#endif
}
#endif
#undef SLR_ERM_STREAM_ARGS
#undef SLR_ERM_STREAM_PASS

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
