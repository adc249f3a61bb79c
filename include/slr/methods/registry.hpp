#pragma once
// The solver interface: every method ("bayes", "population", "fixed-point", …) is described
// once here, with its options, its solve function, a cost model and a memory estimate.
// The CLI's `point` command, job-file validation and the MPI workers all go through this
// registry, so adding a method is one source file (src/methods/<name>.cpp) plus one line
// in all_methods(). Nothing here uses MPI.
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "slr/grid/point.hpp"
#include "slr/grid/result_record.hpp"

namespace slr::methods {

struct option_spec {
  enum class value_type { integer, real, choice, text };
  std::string name;          ///< CLI flag without dashes and job-file key, e.g. "samples", "max-iter"
  value_type type = value_type::real;
  std::string default_value; ///< canonical text
  std::string help;
  std::vector<std::string> choices;                      ///< for value_type::choice
  double minimum = -std::numeric_limits<double>::infinity(); ///< inclusive, for integer/real
  double maximum = std::numeric_limits<double>::infinity();  ///< inclusive
  /// For options added after archives exist: while at its default the option is left out of a
  /// point's canonical text, so points of existing archives keep their identities (and seeds).
  bool omitted_when_default = false;
};

/// How a solve runs (never part of a point's identity: results do not depend on it).
struct run_context {
  unsigned threads = 1;                                            ///< 0 = all hardware threads
  double wall_time_limit_s = std::numeric_limits<double>::infinity(); ///< per point; solvers stop with status timeout
  /// Result of the previous point of a continuation chain (α-continuation), or null. Iterative
  /// solvers that support warm starts initialise from its order_parameters.* and V.* columns.
  const grid::result_record* warm_start = nullptr;
};

struct method_descriptor {
  std::string name;
  std::string summary;
  bool finite_alpha = false; ///< needs alpha > 0 and r_k, r_v ≥ 0
  /// With finite_alpha: false for methods without an ERM penalty (the Bayes-optimal state
  /// evolution), whose points take α but no r_k, r_v (they are cleared to keep identities canonical).
  bool uses_regularisation = true;
  std::vector<option_spec> options;
  std::function<grid::result_record(const grid::point&, const run_context&)> solve;
  /// Estimated single-thread wall time in seconds (for scheduling most-expensive-first).
  std::function<double(const grid::point&)> cost_seconds;
  /// Estimated peak memory in bytes (for the per-node memory budget).
  std::function<std::size_t(const grid::point&)> memory_bytes;
  /// Optional: checks option combinations of a completed point (before any work is scheduled);
  /// throws std::invalid_argument naming the option and the reason.
  std::function<void(const grid::point&)> validate;
};

[[nodiscard]] const std::vector<method_descriptor>& all_methods();
/// Throws std::invalid_argument naming the known methods.
[[nodiscard]] const method_descriptor& find_method(std::string_view name);

/// Checks one option value against its spec and returns its canonical text; throws
/// std::invalid_argument "option '<name>': <reason>".
[[nodiscard]] std::string canonical_option(const option_spec& spec, std::string_view value);

/// Validates a point for its method: fills defaulted options, canonicalises values, rejects
/// unknown options and out-of-range α, r. Throws std::invalid_argument naming the field.
void complete_point(grid::point& point);

/// Reads an option of a completed point as a number / text (throws std::out_of_range if absent).
[[nodiscard]] double option_number(const grid::point& point, std::string_view name);
[[nodiscard]] const std::string& option_text(const grid::point& point, std::string_view name);

/// Runs the method's solver. Exceptions become status failed with the message; the record's
/// wall_s is always set.
[[nodiscard]] grid::result_record solve_point(const grid::point& point, const run_context& context);

} // namespace slr::methods
