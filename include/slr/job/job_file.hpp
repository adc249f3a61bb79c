#pragma once
// Job files (TOML, schema in jobs/README.md): what a user submits to `slr-sweep run`.
//
//   name = "smoke"                 # sweep name, [A-Za-z0-9._-]+
//   seed = 2024                    # master seed (integer >= 0); point seeds derive from it
//   [grid]                         # axes shared by all methods (each: value, list, {linspace=[a,b,n]},
//   task = ["spiked", "max"]       #   {logspace=[a,b,n]} = 10^a … 10^b, base-10 exponents)
//   nu = [1, 4, "inf"]
//   L = [3, {1 = 0.25, 3 = 0.75}]  # fixed L, or a pmf table / "1:0.25,3:0.75" text
//   alpha = {logspace = [-1, 1, 9]}
//   zip = [["r_k", "r_v"]]         # axes iterated together instead of as a product
//   repeats = 3                    # independent seeds per point
//   [[method]]                     # one entry per method (a method may appear several times)
//   name = "population"
//   samples = 20000                # options of the method registry; a list makes an option axis
//   grid = { nu = [1, 2] }         # optional per-method replacement of whole axes
//   continuation = "alpha"         # optional: chain finite-α points along increasing α (warm starts)
//
// Parsing checks everything that can be checked without expanding: syntax, unknown keys,
// types, ranges of axis values, method names and option values (through the method
// registry, slr/methods/registry.hpp). Every failure throws job_error.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slr/job/job_error.hpp"
#include "slr/model/activation.hpp"
#include "slr/model/length_law.hpp"
#include "slr/model/task.hpp"

namespace slr::job {

/// The grid axes of a job, in the order of the Cartesian product (outermost first).
/// Values are already validated (ν ≥ 0, Δ ≥ 0 finite, α > 0 finite, r ≥ 0 finite, …).
struct grid_axes {
  std::vector<model::task_kind> task;          ///< default {spiked}
  std::vector<double> nu;                      ///< ≥ 0, +∞ allowed ("inf"); default {1}
  std::vector<model::length_law> L;            ///< default {fixed(3)}
  std::vector<double> delta;                   ///< ≥ 0; default {0}
  std::vector<model::activation_kind> activation; ///< default {softmax}
  std::vector<double> erf_offset;              ///< used by erf only (collapsed otherwise); default {0}
  std::vector<double> alpha;                   ///< > 0; finite-α methods only (collapsed otherwise); default {}
  std::vector<double> r_k;                     ///< ≥ 0; finite-α methods only; default {}
  std::vector<double> r_v;                     ///< ≥ 0; finite-α methods only; default {}
  std::vector<std::vector<std::string>> zip;   ///< groups of axis names iterated together (equal lengths)
  std::uint32_t repeats = 1;                   ///< independent seeds per point, ≥ 1
};

/// Names of the grid axes as used in job files and in zip groups, in product order.
[[nodiscard]] const std::vector<std::string_view>& axis_names();

enum class continuation_kind { none, alpha };

/// One [[method]] entry: a registry method, its options and its (merged) grid.
struct method_entry {
  std::string name;                                           ///< a registry method name
  std::map<std::string, std::vector<std::string>> options;    ///< option → canonical values (≥ 1; > 1 = option axis)
  grid_axes grid;                                             ///< top-level [grid] with this entry's overrides applied
  continuation_kind continuation = continuation_kind::none;
};

struct job_spec {
  std::string source_name;     ///< file path or a label such as "results.h5:/job_text" (for messages)
  std::string text;            ///< the job text exactly as read (stored in archives)
  std::string name;            ///< sweep name
  std::string description;     ///< optional free text
  std::uint64_t master_seed = 0;
  std::vector<method_entry> methods; ///< ≥ 1, in file order
};

/// Parses and validates a job from text; source_name is used in error messages.
/// Throws job_error (TOML syntax errors carry line:column).
[[nodiscard]] job_spec parse_job(std::string_view text, std::string source_name);

/// Reads a file and parses it. Throws job_error (field "<file>") if it cannot be read.
[[nodiscard]] job_spec load_job_file(const std::filesystem::path& path);

} // namespace slr::job
