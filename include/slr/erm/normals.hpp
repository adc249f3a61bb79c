#pragma once
// Bulk standard normals for finite-D simulations, counter-based and vectorisable.
//
// Numbers are addressed by (seed, purpose, index, row, position): block j of the stream holds
// Philox-4x32-10(counter = {j, row, index_lo, index_hi}, key = derive_seed(seed, purpose)) and
// yields the normals at positions 2j and 2j+1 through Box–Muller (52-bit radius uniform, 53-bit angle).
// The same address gives the same number whatever thread, rank or array length draws it.
// log, sin and cos are branch-free polynomial evaluations (relative error ~1e-15), so the
// compiler vectorises the whole transform; no libm calls in the inner loop. Every fused
// multiply-add is explicit, so the numbers are bit-identical on every x86-64 CPU, whichever
// compiled version (baseline, AVX2, AVX-512) runs.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "slr/model/random.hpp"

namespace slr::erm {

/// Philox-4x32-10 of one counter/key (identical to Random123's r123::Philox4x32; exposed for tests).
[[nodiscard]] std::array<std::uint32_t, 4> philox_4x32_10(std::array<std::uint32_t, 4> counter,
                                                       std::array<std::uint32_t, 2> key) noexcept;

/// The stream of one (seed, purpose, index, row): fill() writes positions [0, n).
class normal_stream {
public:
  normal_stream(std::uint64_t seed, model::stream_purpose purpose, std::uint64_t index, std::uint32_t row) noexcept;
  /// out[i] = normal number at position i, for i < out.size() (< 2^33).
  void fill(std::span<double> out) const noexcept;
  /// The Philox key of this stream (for tests that recompute numbers block by block).
  [[nodiscard]] std::array<std::uint32_t, 2> key() const noexcept { return key_; }
  [[nodiscard]] std::uint32_t row() const noexcept { return row_; }

private:
  std::array<std::uint32_t, 2> key_;
  std::uint32_t row_, index_lo_, index_hi_;
};

/// Philox kernels: the portable loop and hand-vectorised AVX2 / AVX-512 versions (bit-identical;
/// fill() uses the best the CPU has). Exposed so that tests can compare every available kernel.
enum class philox_kernel { portable, avx2, avx512 };
inline constexpr std::size_t philox_batch_blocks = 64;
[[nodiscard]] bool philox_kernel_available(philox_kernel kernel) noexcept;
/// Blocks [start, start + 64) of the stream with this key, row and index, as Box–Muller inputs
/// radius_bits = (word0·2^32 + word1) >> 12 and angle_bits = (word2·2^32 + word3) >> 11.
/// Throws std::invalid_argument if the CPU lacks the kernel.
void philox_blocks(philox_kernel kernel, std::array<std::uint32_t, 2> key, std::uint32_t row, std::uint64_t index,
                   std::size_t start, std::span<std::uint64_t, philox_batch_blocks> radius_bits,
                   std::span<std::uint64_t, philox_batch_blocks> angle_bits);

/// Box–Muller on integers a < 2^52, b < 2^53: with u1 = (a + ½)2^-52 and θ = 2π(b + ½)2^-53,
/// returns (√(−2 ln u1) cos θ, √(−2 ln u1) sin θ), using the vectorisable polynomial log/sincos of
/// normal_stream (exposed for tests).
[[nodiscard]] std::array<double, 2> box_muller(std::uint64_t a, std::uint64_t b) noexcept;

} // namespace slr::erm
