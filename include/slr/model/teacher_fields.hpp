#pragma once
// A Monte Carlo sample of teacher-side local fields (L, ε*, χ*, z*) and the location
// posterior p = P(ε* | χ*), drawn exactly from the task law (docs/theory.md §1) and stratified
// over the length law: length L gets n_L = max(1, round(S·P_L)) samples of weight P_L / n_L.
// Sample s uses the counter stream (seed, teacher_fields, s): it is the same for any thread count.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "slr/model/length_law.hpp"
#include "slr/model/task.hpp"

namespace slr::model {

struct teacher_fields {
  std::size_t max_length = 0;
  std::vector<std::uint32_t> length;   ///< per sample
  std::vector<std::uint32_t> location; ///< ε* per sample
  std::vector<std::uint32_t> stratum;  ///< index into the length law's support
  std::vector<double> weight;          ///< per sample; sums to 1
  std::vector<double> chi_star;        ///< S × max_length, padded with 0
  std::vector<double> z_star;          ///< S × max_length, padded with 0
  std::vector<double> posterior;       ///< S × max_length, padded with 0

  [[nodiscard]] std::size_t size() const noexcept { return length.size(); }
  /// 1 / Σ of the weights of every stride-th sample (exactly 1 for stride ≤ 1): the factor that
  /// makes a strided subsample's weights sum to 1. Samples are laid out stratum after stratum, so
  /// such a subsample keeps the length law's proportions.
  [[nodiscard]] double strided_weight_scale(std::size_t stride) const noexcept {
    if (stride <= 1) return 1.0;
    double total = 0;
    for (std::size_t s = 0; s < size(); s += stride) total += weight[s];
    return 1.0 / total;
  }
  /// Every stride-th sample (0, stride, 2·stride, …) as a sample of its own, laid out
  /// contiguously, weights unchanged (scale them by strided_weight_scale(stride) to sum to 1).
  /// A pass over it reads what a strided pass over this sample reads, in the same order, without
  /// the strided pass's cache misses. stride ≥ 1.
  [[nodiscard]] teacher_fields every(std::size_t stride) const;
  [[nodiscard]] std::span<const double> chi(std::size_t s) const noexcept {
    return {chi_star.data() + s * max_length, length[s]};
  }
  [[nodiscard]] std::span<const double> z(std::size_t s) const noexcept {
    return {z_star.data() + s * max_length, length[s]};
  }
  [[nodiscard]] std::span<const double> p(std::size_t s) const noexcept {
    return {posterior.data() + s * max_length, length[s]};
  }
};

/// Rows 0, stride, 2·stride, … of a row-major array of rows of `row_length` values (the
/// per-token arrays that accompany a teacher_fields sample), contiguous.
[[nodiscard]] std::vector<double> every_row(std::span<const double> rows, std::size_t row_length, std::size_t stride);

/// Draws about `samples` samples (≥ 1 per length in the support). Throws std::invalid_argument
/// if samples == 0.
[[nodiscard]] teacher_fields draw_teacher_fields(const task& task, const length_law& lengths,
                                                 std::size_t samples, std::uint64_t seed,
                                                 unsigned threads = 1);

} // namespace slr::model
