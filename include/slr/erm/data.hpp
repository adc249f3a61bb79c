#pragma once
// Finite-D data of single-location regression (docs/theory.md §0–§1): the teacher (k*, v*) and
// sequences X_μ ∈ R^{L_μ×D} with labels y_μ, drawn with the exact task samplers:
//   spiked-SLR  ε ~ Unif{0..L−1}, x_ε = √ν k*/√D + N(0, I);
//   max-SLR     x_l ~ N(0, I), χ*_l = k*·x_l/√D, ε ~ softmax(νχ*) (argmax at ν = ∞);
//   y = z*_ε + Δξ with z*_l = v*·x_l/√D.
// Variable lengths are stored padded to L_max (padding rows are zero and never read).
// Sequence μ of a (seed, purpose) is the same whatever the thread count or the range it is
// generated in: tokens come from erm::normal_stream(seed, purpose, μ, row) and the few scalars
// (length, location, label noise) from model::counter_rng(seed, purpose, μ).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "slr/model/problem.hpp"
#include "slr/model/random.hpp"

namespace slr::erm {

/// Storage type of the tokens. Arithmetic is always in double; f32 halves memory and traffic
/// (the labels and teacher fields are computed from the stored, rounded tokens).
enum class precision { f64, f32 };
/// Parses "f64" or "f32"; throws std::invalid_argument otherwise.
[[nodiscard]] precision parse_precision(std::string_view name);
[[nodiscard]] std::string_view precision_name(precision p) noexcept;
[[nodiscard]] std::size_t bytes_per_token_entry(precision p) noexcept;

/// The teacher: |k*|² = |v*|² = D and k*·v* = 0 exactly (Gram–Schmidt on Gaussian vectors).
struct teacher {
  Eigen::VectorXd k_star;
  Eigen::VectorXd v_star;
  /// Throws std::invalid_argument if dimension < 2.
  static teacher draw(std::size_t dimension, std::uint64_t seed);
  [[nodiscard]] std::size_t dimension() const noexcept { return static_cast<std::size_t>(k_star.size()); }
};

/// Bytes of the token array of `sequences` sequences (padded to max_length).
[[nodiscard]] double token_bytes(std::size_t sequences, std::size_t max_length, std::size_t dimension,
                                 precision storage) noexcept;

/// Memory the operating system reports as available to this process (MemAvailable of
/// /proc/meminfo, else free physical pages), in bytes.
[[nodiscard]] double available_memory_bytes();

class sequence_data {
public:
  /// Draws sequences first_index … first_index + count − 1 of the stream (seed, purpose).
  /// Throws std::invalid_argument if count == 0 or the teacher dimension is < 2;
  /// std::bad_alloc if the tokens do not fit.
  static sequence_data generate(const model::problem& problem, const teacher& teacher, std::size_t count,
                                std::uint64_t seed, model::stream_purpose purpose, precision storage,
                                unsigned threads = 1, std::uint64_t first_index = 0);

  [[nodiscard]] std::size_t size() const noexcept { return labels_.size(); }
  [[nodiscard]] std::size_t max_length() const noexcept { return max_length_; }
  [[nodiscard]] std::size_t dimension() const noexcept { return dimension_; }
  [[nodiscard]] precision storage() const noexcept { return storage_; }
  /// Row-major tokens [μ][l][i], μ < size(), l < max_length(), i < dimension(); the pointer of
  /// the other precision is null.
  [[nodiscard]] const double* tokens_f64() const noexcept { return f64_.get(); }
  [[nodiscard]] const float* tokens_f32() const noexcept { return f32_.get(); }
  [[nodiscard]] std::uint32_t length(std::size_t mu) const noexcept { return lengths_[mu]; }
  [[nodiscard]] std::uint32_t location(std::size_t mu) const noexcept { return locations_[mu]; }
  [[nodiscard]] double label(std::size_t mu) const noexcept { return labels_[mu]; }
  /// Token l of sequence μ converted to double (for tests and diagnostics; O(D)).
  [[nodiscard]] Eigen::VectorXd token(std::size_t mu, std::size_t l) const;
  [[nodiscard]] double bytes() const noexcept;

private:
  std::size_t max_length_ = 0, dimension_ = 0;
  precision storage_ = precision::f64;
  std::unique_ptr<double[]> f64_;
  std::unique_ptr<float[]> f32_;
  std::vector<std::uint32_t> lengths_, locations_;
  std::vector<double> labels_;
};

} // namespace slr::erm
