#include "slr/erm/normals.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <stdexcept>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#include <immintrin.h>
#endif

#include "vector_clones.hpp"

namespace slr::erm {
namespace {
// Philox-4x32 constants (Salmon et al. 2011, as in Random123).
constexpr std::uint32_t multiplier0 = 0xD2511F53U;
constexpr std::uint32_t multiplier1 = 0xCD9E8D57U;
constexpr std::uint32_t weyl0 = 0x9E3779B9U;
constexpr std::uint32_t weyl1 = 0xBB67AE85U;
constexpr int philox_rounds = 10;

// Exact conversion of an integer below 2^52 to double without an int→double instruction
// (AVX2 has no vector uint64→double conversion; this keeps the loops vectorisable).
SLR_ERM_INLINE double small_integer_to_double(std::uint64_t value) noexcept {
  constexpr std::uint64_t two52_bits = 0x4330000000000000ULL;
  return std::bit_cast<double>(value | two52_bits) - 4503599627370496.0;
}

// Reproducibility across CPUs: this file is compiled with -ffp-contract=off and every fused
// multiply-add is written as std::fma, so the baseline clone (libm's correctly rounded fma), the
// AVX2 and the AVX-512 clones (the vfmadd instruction) compute bit-identical numbers; otherwise
// the compiler would contract a different set of operations in each clone.

// ln x for finite x > 0 (normal range): x = m·2^e with m ∈ [√½, √2), ln m = 2 atanh(s),
// s = (m−1)/(m+1), |s| ≤ 0.1716, by its odd series to s^21 (truncation < 2e-17 relative).
SLR_ERM_INLINE double polynomial_log(double x) noexcept {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const std::uint64_t mantissa = (bits & 0x000FFFFFFFFFFFFFULL) | 0x3FF0000000000000ULL;
  double m = std::bit_cast<double>(mantissa);
  double exponent = small_integer_to_double(bits >> 52) - 1023.0;
  const bool high = m > std::numbers::sqrt2;
  m = high ? 0.5 * m : m;
  exponent = high ? exponent + 1.0 : exponent;
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double series = 1.0 / 21.0;
  series = std::fma(series, s2, 1.0 / 19.0);
  series = std::fma(series, s2, 1.0 / 17.0);
  series = std::fma(series, s2, 1.0 / 15.0);
  series = std::fma(series, s2, 1.0 / 13.0);
  series = std::fma(series, s2, 1.0 / 11.0);
  series = std::fma(series, s2, 1.0 / 9.0);
  series = std::fma(series, s2, 1.0 / 7.0);
  series = std::fma(series, s2, 1.0 / 5.0);
  series = std::fma(series, s2, 1.0 / 3.0);
  series = std::fma(series, s2, 1.0);
  constexpr double ln2_hi = 0x1.62e42fefa3800p-1; // ln 2 split so that exponent·ln2_hi is exact
  constexpr double ln2_lo = 0x1.ef35793c76730p-45;
  return exponent * ln2_hi + std::fma(2.0 * s, series, exponent * ln2_lo);
}

// sin x and cos x on [0, π/4] by Taylor series to x^17 / x^18 (truncation < 1e-17).
SLR_ERM_INLINE void polynomial_sincos(double x, double& sine, double& cosine) noexcept {
  const double x2 = x * x;
  double s = 1.0 / 355687428096000.0;                        // +1/17!, then Horner down to −1/3!
  s = std::fma(s, x2, -1.0 / 1307674368000.0);              // −1/15!
  s = std::fma(s, x2, 1.0 / 6227020800.0);                  // +1/13!
  s = std::fma(s, x2, -1.0 / 39916800.0);                   // −1/11!
  s = std::fma(s, x2, 1.0 / 362880.0);                      // +1/9!
  s = std::fma(s, x2, -1.0 / 5040.0);                       // −1/7!
  s = std::fma(s, x2, 1.0 / 120.0);                         // +1/5!
  s = std::fma(s, x2, -1.0 / 6.0);                          // −1/3!
  sine = std::fma(x * x2, s, x);
  double c = 1.0 / 6402373705728000.0;                       // +1/18!
  c = std::fma(c, x2, -1.0 / 20922789888000.0);             // −1/16!
  c = std::fma(c, x2, 1.0 / 87178291200.0);                 // +1/14!
  c = std::fma(c, x2, -1.0 / 479001600.0);                  // −1/12!
  c = std::fma(c, x2, 1.0 / 3628800.0);                     // +1/10!
  c = std::fma(c, x2, -1.0 / 40320.0);                      // −1/8!
  c = std::fma(c, x2, 1.0 / 720.0);                         // +1/6!
  c = std::fma(c, x2, -1.0 / 24.0);                         // −1/4!
  c = std::fma(c, x2, 0.5);                                 // +1/2!
  cosine = std::fma(-x2, c, 1.0);
}

// Box–Muller from a 52-bit integer a (radius) and a 53-bit integer b (angle):
// u1 = (a + ½)2^-52 ∈ (0, 1) exactly representable (|normal| ≤ 8.57);
// the angle 2π(b + ½)2^-53 is split into its octant (top 3 bits of b) and an offset in
// [0, π/4] so that the polynomials only see [0, π/4].
SLR_ERM_INLINE void box_muller_bits(std::uint64_t a, std::uint64_t b, double& first, double& second) noexcept {
  constexpr double two_minus52 = 0x1.0p-52;
  constexpr double quarter_pi_over_two50 = std::numbers::pi / 4.0 * 0x1.0p-50;
  const double u1 = (small_integer_to_double(a) + 0.5) * two_minus52;
  const double radius = std::sqrt(-2.0 * polynomial_log(u1));
  const std::uint64_t octant = b >> 50;
  const std::uint64_t offset = b & ((std::uint64_t{1} << 50) - 1);
  const bool odd = (octant & 1U) != 0;
  // Even octant: ψ = offset angle; odd octant: measure from the next multiple of π/2.
  const double x = odd ? (small_integer_to_double((std::uint64_t{1} << 50) - offset) - 0.5) * quarter_pi_over_two50
                       : (small_integer_to_double(offset) + 0.5) * quarter_pi_over_two50;
  double sx = 0, cx = 0;
  polynomial_sincos(x, sx, cx);
  const double sin_psi = odd ? cx : sx; // ψ ∈ [0, π/2): angle within the quadrant
  const double cos_psi = odd ? sx : cx;
  const std::uint64_t quadrant = octant >> 1;
  // θ = quadrant·π/2 + ψ.
  const double cos_theta = quadrant == 0 ? cos_psi : quadrant == 1 ? -sin_psi : quadrant == 2 ? -cos_psi : sin_psi;
  const double sin_theta = quadrant == 0 ? sin_psi : quadrant == 1 ? cos_psi : quadrant == 2 ? -sin_psi : -cos_psi;
  first = radius * cos_theta;
  second = radius * sin_theta;
}

constexpr std::size_t batch = philox_batch_blocks; // Philox blocks per vectorised batch

// Philox-4x32-10 of the `batch` counters {start + j, row, index_lo, index_hi}, j < batch, returned
// as the Box–Muller inputs radius_bits[j] = (word0·2^32 + word1) >> 12 (52 bits) and
// angle_bits[j] = (word2·2^32 + word3) >> 11 (53 bits).
// Portable form: structure-of-arrays over 32-bit lanes, every statement a lane-wise loop the
// compiler vectorises (with AVX2 the 32×32→64 products become vpmuludq).
SLR_ERM_INLINE void philox_batch_portable(std::uint32_t key0, std::uint32_t key1, std::uint32_t row,
                                          std::uint32_t index_lo, std::uint32_t index_hi, std::size_t start,
                                          std::uint64_t* radius_bits, std::uint64_t* angle_bits) noexcept {
  alignas(64) std::uint32_t c0[batch], c1[batch], c2[batch], c3[batch];
  for (std::size_t j = 0; j < batch; ++j) {
    c0[j] = static_cast<std::uint32_t>(start + j);
    c1[j] = row;
    c2[j] = index_lo;
    c3[j] = index_hi;
  }
  std::uint32_t k0 = key0, k1 = key1;
  for (int round = 0; round < philox_rounds; ++round) {
    if (round > 0) {
      k0 += weyl0;
      k1 += weyl1;
    }
    for (std::size_t j = 0; j < batch; ++j) {
      const std::uint64_t p0 = std::uint64_t{multiplier0} * c0[j];
      const std::uint64_t p1 = std::uint64_t{multiplier1} * c2[j];
      const std::uint32_t next0 = static_cast<std::uint32_t>(p1 >> 32) ^ c1[j] ^ k0;
      const std::uint32_t next2 = static_cast<std::uint32_t>(p0 >> 32) ^ c3[j] ^ k1;
      c1[j] = static_cast<std::uint32_t>(p1);
      c3[j] = static_cast<std::uint32_t>(p0);
      c0[j] = next0;
      c2[j] = next2;
    }
  }
  for (std::size_t j = 0; j < batch; ++j) {
    radius_bits[j] = ((std::uint64_t{c0[j]} << 32) | c1[j]) >> 12;
    angle_bits[j] = ((std::uint64_t{c2[j]} << 32) | c3[j]) >> 11;
  }
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SLR_ERM_PHILOX_INTRINSICS 1
// Hand-vectorised Philox rounds, chosen at run time (philox_batch below). Left to itself GCC 12
// vectorises the widening 32×32→64 multiply badly (vpmullq with AVX-512, 15 cycles latency) and
// spends a mask per word and round. Here the four words live in 64-bit lanes, multiplied with
// vpmuludq (which reads only the low 32 bits of a lane), so the high halves of the lanes may hold
// garbage until the final packing: no masking inside the rounds. hi(p) is moved to the low half
// by vpshufd (a port-5 shuffle, leaving port 0 to the multiplies), and with AVX-512 the two xors
// of a Philox word are one vpternlogq. Integer arithmetic: bit-identical to the portable form
// (tested for every kernel the CPU has). Philox cost per normal, in cache, one thread (Xeon,
// Sapphire Rapids VM): portable loop at baseline SSE2 4.3 ns; the same loop compiled for AVX2 by
// GCC 12 4.7 ns; the AVX2 kernel below 2.6 ns; the AVX-512 kernel 1.2 ns (was 1.9 ns when GCC
// vectorised it with vpmullq and masks).
constexpr std::size_t philox_groups = 4; // independent vectors in flight: hides the multiply latency

__attribute__((target("avx2"))) void philox_batch_avx2(std::uint32_t key0, std::uint32_t key1, std::uint32_t row,
                                                       std::uint32_t index_lo, std::uint32_t index_hi,
                                                       std::size_t start, std::uint64_t* radius_bits,
                                                       std::uint64_t* angle_bits) noexcept {
  constexpr std::size_t lanes = 4;
  const __m256i low32 = _mm256_set1_epi64x(0xFFFFFFFFLL);
  const __m256i m0 = _mm256_set1_epi64x(multiplier0);
  const __m256i m1 = _mm256_set1_epi64x(multiplier1);
  const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
  for (std::size_t outer = 0; outer < batch; outer += philox_groups * lanes) {
    __m256i c0[philox_groups], c1[philox_groups], c2[philox_groups], c3[philox_groups];
    for (std::size_t g = 0; g < philox_groups; ++g) {
      c0[g] = _mm256_add_epi64(_mm256_set1_epi64x(static_cast<long long>(start + outer + g * lanes)), lane);
      c1[g] = _mm256_set1_epi64x(row);
      c2[g] = _mm256_set1_epi64x(index_lo);
      c3[g] = _mm256_set1_epi64x(index_hi);
    }
    std::uint32_t k0 = key0, k1 = key1;
    for (int round = 0; round < philox_rounds; ++round) {
      if (round > 0) {
        k0 += weyl0;
        k1 += weyl1;
      }
      const __m256i key_word0 = _mm256_set1_epi64x(k0);
      const __m256i key_word1 = _mm256_set1_epi64x(k1);
      for (std::size_t g = 0; g < philox_groups; ++g) {
        const __m256i p0 = _mm256_mul_epu32(c0[g], m0);
        const __m256i p1 = _mm256_mul_epu32(c2[g], m1);
        const __m256i high1 = _mm256_shuffle_epi32(p1, 0xB1); // swap the 32-bit halves of each lane
        const __m256i high0 = _mm256_shuffle_epi32(p0, 0xB1);
        c0[g] = _mm256_xor_si256(_mm256_xor_si256(high1, c1[g]), key_word0);
        c2[g] = _mm256_xor_si256(_mm256_xor_si256(high0, c3[g]), key_word1);
        c1[g] = p1; // low halves are lo(p); high halves are garbage, never read before the packing
        c3[g] = p0;
      }
    }
    for (std::size_t g = 0; g < philox_groups; ++g) {
      const __m256i word01 = _mm256_or_si256(_mm256_slli_epi64(c0[g], 32), _mm256_and_si256(c1[g], low32));
      const __m256i word23 = _mm256_or_si256(_mm256_slli_epi64(c2[g], 32), _mm256_and_si256(c3[g], low32));
      _mm256_store_si256(reinterpret_cast<__m256i*>(radius_bits + outer + g * lanes), _mm256_srli_epi64(word01, 12));
      _mm256_store_si256(reinterpret_cast<__m256i*>(angle_bits + outer + g * lanes), _mm256_srli_epi64(word23, 11));
    }
  }
}

// (GCC 12's avx512fintrin.h initialises a dummy vector from itself: a false -Wuninitialized.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f"))) void philox_batch_avx512(std::uint32_t key0, std::uint32_t key1,
                                                            std::uint32_t row, std::uint32_t index_lo,
                                                            std::uint32_t index_hi, std::size_t start,
                                                            std::uint64_t* radius_bits,
                                                            std::uint64_t* angle_bits) noexcept {
  constexpr std::size_t lanes = 8;
  constexpr int xor3 = 0x96; // vpternlogq truth table of a ^ b ^ c
  const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFFLL);
  const __m512i m0 = _mm512_set1_epi64(multiplier0);
  const __m512i m1 = _mm512_set1_epi64(multiplier1);
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  for (std::size_t outer = 0; outer < batch; outer += philox_groups * lanes) {
    __m512i c0[philox_groups], c1[philox_groups], c2[philox_groups], c3[philox_groups];
    for (std::size_t g = 0; g < philox_groups; ++g) {
      c0[g] = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(start + outer + g * lanes)), lane);
      c1[g] = _mm512_set1_epi64(row);
      c2[g] = _mm512_set1_epi64(index_lo);
      c3[g] = _mm512_set1_epi64(index_hi);
    }
    std::uint32_t k0 = key0, k1 = key1;
    for (int round = 0; round < philox_rounds; ++round) {
      if (round > 0) {
        k0 += weyl0;
        k1 += weyl1;
      }
      const __m512i key_word0 = _mm512_set1_epi64(k0);
      const __m512i key_word1 = _mm512_set1_epi64(k1);
      for (std::size_t g = 0; g < philox_groups; ++g) {
        const __m512i p0 = _mm512_mul_epu32(c0[g], m0);
        const __m512i p1 = _mm512_mul_epu32(c2[g], m1);
        const __m512i high1 = _mm512_shuffle_epi32(p1, _MM_PERM_CDAB); // swap the 32-bit halves
        const __m512i high0 = _mm512_shuffle_epi32(p0, _MM_PERM_CDAB);
        c0[g] = _mm512_ternarylogic_epi64(high1, c1[g], key_word0, xor3);
        c2[g] = _mm512_ternarylogic_epi64(high0, c3[g], key_word1, xor3);
        c1[g] = p1;
        c3[g] = p0;
      }
    }
    for (std::size_t g = 0; g < philox_groups; ++g) {
      const __m512i word01 = _mm512_or_si512(_mm512_slli_epi64(c0[g], 32), _mm512_and_si512(c1[g], low32));
      const __m512i word23 = _mm512_or_si512(_mm512_slli_epi64(c2[g], 32), _mm512_and_si512(c3[g], low32));
      _mm512_store_si512(radius_bits + outer + g * lanes, _mm512_srli_epi64(word01, 12));
      _mm512_store_si512(angle_bits + outer + g * lanes, _mm512_srli_epi64(word23, 11));
    }
  }
}
#pragma GCC diagnostic pop
#endif

using philox_batch_fn = void (*)(std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t,
                                 std::size_t, std::uint64_t*, std::uint64_t*) noexcept;

void philox_batch_baseline(std::uint32_t key0, std::uint32_t key1, std::uint32_t row, std::uint32_t index_lo,
                           std::uint32_t index_hi, std::size_t start, std::uint64_t* radius_bits,
                           std::uint64_t* angle_bits) noexcept {
  philox_batch_portable(key0, key1, row, index_lo, index_hi, start, radius_bits, angle_bits);
}

philox_batch_fn philox_kernel_function(philox_kernel kernel) noexcept {
#ifdef SLR_ERM_PHILOX_INTRINSICS
  __builtin_cpu_init(); // may run from a static initialiser, before libgcc's own
#endif
  switch (kernel) {
#ifdef SLR_ERM_PHILOX_INTRINSICS
  case philox_kernel::avx2:
    return __builtin_cpu_supports("avx2") ? &philox_batch_avx2 : nullptr;
  case philox_kernel::avx512:
    return __builtin_cpu_supports("avx512f") ? &philox_batch_avx512 : nullptr;
#else
  case philox_kernel::avx2:
  case philox_kernel::avx512:
    return nullptr;
#endif
  case philox_kernel::portable:
    break;
  }
  return &philox_batch_baseline;
}

// The best kernel of this CPU, chosen once (a call through a pointer per 128 normals).
const philox_batch_fn philox_batch = [] {
  for (const auto kernel : {philox_kernel::avx512, philox_kernel::avx2})
    if (const auto fn = philox_kernel_function(kernel)) return fn;
  return philox_kernel_function(philox_kernel::portable);
}();

SLR_ERM_VECTOR_CLONES void fill_blocks(std::uint32_t key0, std::uint32_t key1, std::uint32_t row, std::uint32_t index_lo,
                                       std::uint32_t index_hi, double* out, std::size_t n) noexcept {
  const std::size_t blocks = (n + 1) / 2;
  alignas(64) std::uint64_t radius_bits[batch], angle_bits[batch];
  alignas(64) double first[batch], second[batch];
  for (std::size_t start = 0; start < blocks; start += batch) {
    philox_batch(key0, key1, row, index_lo, index_hi, start, radius_bits, angle_bits);
    for (std::size_t j = 0; j < batch; ++j) box_muller_bits(radius_bits[j], angle_bits[j], first[j], second[j]);
    double* target = out + 2 * start;
    const std::size_t available = n - 2 * start;
    if (available >= 2 * batch) {
      // Full batch: an unconditional interleaving store the compiler vectorises (the
      // conditional tail below would keep it scalar).
      for (std::size_t j = 0; j < batch; ++j) {
        target[2 * j] = first[j];
        target[2 * j + 1] = second[j];
      }
    } else {
      for (std::size_t j = 0; 2 * j < available; ++j) {
        target[2 * j] = first[j];
        if (2 * j + 1 < available) target[2 * j + 1] = second[j];
      }
    }
  }
}
} // namespace

std::array<std::uint32_t, 4> philox_4x32_10(std::array<std::uint32_t, 4> c, std::array<std::uint32_t, 2> key) noexcept {
  for (int round = 0; round < philox_rounds; ++round) {
    if (round > 0) {
      key[0] += weyl0;
      key[1] += weyl1;
    }
    const std::uint64_t p0 = std::uint64_t{multiplier0} * c[0];
    const std::uint64_t p1 = std::uint64_t{multiplier1} * c[2];
    c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ key[0], static_cast<std::uint32_t>(p1),
         static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ key[1], static_cast<std::uint32_t>(p0)};
  }
  return c;
}

bool philox_kernel_available(philox_kernel kernel) noexcept { return philox_kernel_function(kernel) != nullptr; }

void philox_blocks(philox_kernel kernel, std::array<std::uint32_t, 2> key, std::uint32_t row, std::uint64_t index,
                   std::size_t start, std::span<std::uint64_t, philox_batch_blocks> radius_bits,
                   std::span<std::uint64_t, philox_batch_blocks> angle_bits) {
  const auto fn = philox_kernel_function(kernel);
  if (fn == nullptr) throw std::invalid_argument("philox_blocks: this CPU lacks the requested kernel");
  alignas(64) std::uint64_t radius[batch], angle[batch];
  fn(key[0], key[1], row, static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), start, radius,
     angle);
  std::copy(radius, radius + batch, radius_bits.begin());
  std::copy(angle, angle + batch, angle_bits.begin());
}

std::array<double, 2> box_muller(std::uint64_t a, std::uint64_t b) noexcept {
  std::array<double, 2> out{};
  box_muller_bits(a, b, out[0], out[1]);
  return out;
}

normal_stream::normal_stream(std::uint64_t seed, model::stream_purpose purpose, std::uint64_t index,
                             std::uint32_t row) noexcept
    : row_(row), index_lo_(static_cast<std::uint32_t>(index)), index_hi_(static_cast<std::uint32_t>(index >> 32)) {
  const std::uint64_t k = model::derive_seed(seed, 0x6e6f726d616c0000ULL + static_cast<std::uint64_t>(purpose));
  key_ = {static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32)};
}

void normal_stream::fill(std::span<double> out) const noexcept {
  fill_blocks(key_[0], key_[1], row_, index_lo_, index_hi_, out.data(), out.size());
}

} // namespace slr::erm
