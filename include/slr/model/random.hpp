#pragma once
// Counter-based random numbers (Random123 Philox-4x64-10).
//
// A stream is addressed by (seed, stream, index): the same address always yields the same
// numbers, whatever thread or MPI rank draws them, so a Monte Carlo sample or a training
// sequence depends only on (seed, purpose, sample index).
#include <cstdint>
#include <string_view>

namespace slr::model {

/// Mixes a master seed with a 64-bit identity (SplitMix64 finaliser on both); used to derive
/// the seed of a grid point from (master seed, point identity).
[[nodiscard]] std::uint64_t derive_seed(std::uint64_t master, std::uint64_t identity) noexcept;

/// Stable 64-bit FNV-1a hash of a text (used for point identities and stream labels).
[[nodiscard]] std::uint64_t stable_hash(std::string_view text) noexcept;

/// Named purposes of random streams, so that different consumers of one seed never overlap.
enum class stream_purpose : std::uint64_t {
  teacher_fields = 1,  ///< (ε*, χ*, z*) of Monte Carlo samples
  student_noise = 2,   ///< ξ of the student fields h = Mᵀh* + R^{1/2}ξ
  channel_noise = 3,   ///< ξ_0 (label noise) and ω-noise of fixed-point/state-evolution samples
  teacher_weights = 4, ///< k*, v* of a finite-D simulation
  training_data = 5,   ///< tokens of training sequences
  test_data = 6,       ///< tokens of fresh test sequences
  initialisation = 7,  ///< initial k, v of a trainer
  repeat = 8,          ///< independent repeats of a Monte Carlo solve
};

/// Sequential generator over one counter-based stream. Cheap to construct (no state beyond
/// the counter); construct one per sample index. Not thread-safe; one per thread.
class counter_rng {
public:
  counter_rng(std::uint64_t seed, stream_purpose purpose, std::uint64_t index) noexcept;
  /// Standard normal N(0, 1) (Box–Muller on Philox output).
  double normal() noexcept;
  /// Uniform on the open interval (0, 1).
  double uniform() noexcept;

private:
  void refill() noexcept;
  std::uint64_t key_[2];
  std::uint64_t counter_[4];
  double buffer_[4];
  int left_ = 0;
  bool holds_normals_ = false;
};

} // namespace slr::model
