#pragma once
// The SLR tasks of docs/theory.md §1: how the hidden location ε* tilts the teacher fields χ*.
//   spiked-SLR: x_ε* = √ν k*/√D + N(0, I), so χ*_ε* has mean √ν (ν ≥ 0 finite);
//   max-SLR:    χ* ~ N(0, I_L) and ε* | χ* ~ softmax(ν χ*) (ν ≥ 0, ν = ∞ means argmax).
// In both, z*_l ~ N(0, 1) iid independent of (χ*, ε*).
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "slr/model/random.hpp"

namespace slr::model {

enum class task_kind { spiked, max };

struct task_name {
  task_kind kind;
  const char* name;
};
/// The one table of task names ("spiked", "max").
[[nodiscard]] std::span<const task_name> task_names() noexcept;

class task {
public:
  /// Throws std::invalid_argument if ν < 0, ν is NaN, or ν = ∞ for the spiked task.
  task(task_kind kind, double nu);
  /// Parses a name of task_names(); throws std::invalid_argument otherwise.
  static task_kind parse_kind(std::string_view name);
  [[nodiscard]] static std::string kind_name(task_kind kind);

  [[nodiscard]] task_kind kind() const noexcept { return kind_; }
  [[nodiscard]] double nu() const noexcept { return nu_; }
  /// True for max-SLR at ν = ∞ (the location is a deterministic function of χ*).
  [[nodiscard]] bool is_hard() const noexcept;
  [[nodiscard]] std::string name() const;

  /// Draws χ* (length chi_star.size() = L ≥ 1) and returns ε* ∈ [0, L), exactly from the task law.
  std::size_t sample(std::span<double> chi_star, counter_rng& rng) const;

  /// Posterior p_l = P(ε* = l | χ*): softmax(√ν χ*) (spiked), softmax(ν χ*) (max), one-hot
  /// on the argmax at ν = ∞. Computed with log-sum-exp.
  void posterior(std::span<const double> chi_star, std::span<double> p) const;

  /// Stein score of the tilt, s_l = ∂ log g(ε, χ*) / ∂χ*_l: √ν δ_lε (spiked),
  /// ν (δ_lε − softmax(νχ*)_l) (max). Throws std::logic_error at ν = ∞ (no density).
  void tilt_score(std::size_t location, std::span<const double> chi_star, std::span<double> score) const;

private:
  task_kind kind_;
  double nu_;
};

} // namespace slr::model
