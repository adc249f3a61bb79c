#include "slr/erm/normals.hpp"

#include <bit>
#include <cmath>
#include <numbers>

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
  series = series * s2 + 1.0 / 19.0;
  series = series * s2 + 1.0 / 17.0;
  series = series * s2 + 1.0 / 15.0;
  series = series * s2 + 1.0 / 13.0;
  series = series * s2 + 1.0 / 11.0;
  series = series * s2 + 1.0 / 9.0;
  series = series * s2 + 1.0 / 7.0;
  series = series * s2 + 1.0 / 5.0;
  series = series * s2 + 1.0 / 3.0;
  series = series * s2 + 1.0;
  constexpr double ln2_hi = 0x1.62e42fefa3800p-1; // ln 2 split so that exponent·ln2_hi is exact
  constexpr double ln2_lo = 0x1.ef35793c76730p-45;
  return exponent * ln2_hi + (2.0 * s * series + exponent * ln2_lo);
}

// sin x and cos x on [0, π/4] by Taylor series to x^17 / x^18 (truncation < 1e-17).
SLR_ERM_INLINE void polynomial_sincos(double x, double& sine, double& cosine) noexcept {
  const double x2 = x * x;
  double s = 1.0 / 355687428096000.0;              // +1/17!, then Horner down to −1/3!
  s = s * x2 - 1.0 / 1307674368000.0;              // −1/15!
  s = s * x2 + 1.0 / 6227020800.0;                 // +1/13!
  s = s * x2 - 1.0 / 39916800.0;                   // −1/11!
  s = s * x2 + 1.0 / 362880.0;                     // +1/9!
  s = s * x2 - 1.0 / 5040.0;                       // −1/7!
  s = s * x2 + 1.0 / 120.0;                        // +1/5!
  s = s * x2 - 1.0 / 6.0;                          // −1/3!
  sine = x + x * x2 * s;
  double c = 1.0 / 6402373705728000.0;             // +1/18!
  c = c * x2 - 1.0 / 20922789888000.0;             // −1/16!
  c = c * x2 + 1.0 / 87178291200.0;                // +1/14!
  c = c * x2 - 1.0 / 479001600.0;                  // −1/12!
  c = c * x2 + 1.0 / 3628800.0;                    // +1/10!
  c = c * x2 - 1.0 / 40320.0;                      // −1/8!
  c = c * x2 + 1.0 / 720.0;                        // +1/6!
  c = c * x2 - 1.0 / 24.0;                         // −1/4!
  c = c * x2 + 0.5;                                // +1/2!
  cosine = 1.0 - x2 * c;
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

constexpr std::size_t batch = 64; // Philox blocks per vectorised batch

SLR_ERM_VECTOR_CLONES void fill_blocks(std::uint32_t key0, std::uint32_t key1, std::uint32_t row, std::uint32_t index_lo,
                                       std::uint32_t index_hi, double* out, std::size_t n) noexcept {
  const std::size_t blocks = (n + 1) / 2;
  alignas(64) std::uint32_t c0[batch], c1[batch], c2[batch], c3[batch];
  alignas(64) double first[batch], second[batch];
  for (std::size_t start = 0; start < blocks; start += batch) {
    // Structure-of-arrays Philox over `batch` consecutive counters: every statement below is a
    // lane-wise loop the compiler turns into SIMD (32×32→64 multiplies, xors).
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
      const std::uint64_t a = ((std::uint64_t{c0[j]} << 32) | c1[j]) >> 12;
      const std::uint64_t b = ((std::uint64_t{c2[j]} << 32) | c3[j]) >> 11;
      box_muller_bits(a, b, first[j], second[j]);
    }
    const std::size_t count = std::min(batch, blocks - start);
    double* target = out + 2 * start;
    const std::size_t available = n - 2 * start;
    for (std::size_t j = 0; j < count; ++j) {
      target[2 * j] = first[j];
      if (2 * j + 1 < available) target[2 * j + 1] = second[j];
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
