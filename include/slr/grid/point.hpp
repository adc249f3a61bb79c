#pragma once
// One point of a sweep: a method, an SLR problem, the finite-α parameters and the
// method-specific options. Its identity is a hash of its canonical text, so a point keeps
// its identity (and therefore its seed) across runs, rank counts and scheduling orders.
#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "slr/model/problem.hpp"

namespace slr::grid {

inline constexpr double not_set = std::numeric_limits<double>::quiet_NaN();

struct point {
  /// The model family: "" for single-location regression (the first model, whose parameters are
  /// the typed fields below), else a registry model name ("tied-attention"), whose parameters are
  /// all held in `options` as canonical text.
  std::string model;
  std::string method;              ///< a name from the method registry ("population", "erm", …)
  model::problem problem;          ///< task, ν, P_L, Δ, activation
  double alpha = not_set;          ///< N/D (> 0) for finite-α methods, NaN otherwise
  double r_k = not_set;            ///< L2 penalty on k (≥ 0) for finite-α methods, NaN otherwise
  double r_v = not_set;            ///< L2 penalty on v (≥ 0)
  std::uint64_t seed = 0;          ///< Monte Carlo / data seed
  std::map<std::string, std::string> options; ///< method options (samples, D, init, tol, …), canonical text

  /// Canonical text "key=value;…" of every parameter except the seed, with shortest
  /// round-trip number formatting; equal points have equal text. Single-location regression:
  /// "method=…;task=…;nu=…;…" as in the first release; other models: "model=…;method=…;" then
  /// every parameter in name order.
  [[nodiscard]] std::string canonical() const;
  /// stable_hash(canonical()).
  [[nodiscard]] std::uint64_t identity() const;
};

/// Shortest text that reads back to exactly the same double ("inf" for +∞, "nan" for NaN).
[[nodiscard]] std::string format_number(double value);

} // namespace slr::grid
