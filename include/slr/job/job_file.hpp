#pragma once
// Job files (TOML, schema in jobs/README.md): what a user submits to `slr-sweep run`.
//
//   name = "smoke"                 # sweep name, [A-Za-z0-9._-]+
//   seed = 2024                    # master seed (integer >= 0); point seeds derive from it
//   model = "slr"                  # optional: the model family of the entries ("slr", "tied-attention")
//   [grid]                         # parameters shared by the methods that take them; each a value,
//   task = ["spiked", "max"]       #   a list, {linspace=[a,b,n]} or {logspace=[a,b,n]} (10^a … 10^b)
//   nu = [1, 4, "inf"]
//   L = [3, {1 = 0.25, 3 = 0.75}]  # fixed L, or a pmf table / "1:0.25,3:0.75" text
//   alpha = [1, 2, 4]
//   D = [400, 283, 200]            # a method option is a parameter like any other
//   zip = [["alpha", "D"]]         # parameters iterated together instead of as a product
//   repeats = 3                    # independent seeds per point
//   [[method]]                     # one entry per method (a method may appear several times)
//   name = "population"
//   samples = 20000                # any parameter of the method, replacing the [grid] one
//   grid = { nu = [1, 2] }         # the same, as a table (may hold zip and repeats)
//   continuation = "alpha"         # optional: chain finite-α points along increasing α (warm starts)
//   [shard]                        # written by `run --shard i/n` only, after a marker line: the
//   index = 0                      #   units of this part of the job (first point id of each unit)
//   count = 3
//   units = ["0123456789abcdef"]
//
// The parameters are those declared by the model and the methods (slr/methods/registry.hpp);
// parsing checks everything that can be checked without expanding: syntax, unknown keys, types,
// ranges, method names. Every failure throws job_error naming the file, the field and the reason.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slr/job/job_error.hpp"

namespace slr::job {

/// The parameters of one method entry: every declared parameter the method takes that the job
/// sets (canonical texts; one value, or several = an axis), zip groups and repeats.
struct grid_axes {
  std::map<std::string, std::vector<std::string>> values; ///< parameter → canonical values (≥ 1)
  std::vector<std::vector<std::string>> zip;              ///< groups of parameters iterated together (equal lengths)
  std::uint32_t repeats = 1;                              ///< independent seeds per point, ≥ 1
};

enum class continuation_kind { none, alpha };

/// One [[method]] entry: a registry method and its parameters (the top-level [grid] merged with
/// the entry's own).
struct method_entry {
  std::string model = "slr"; ///< the model family (top-level or entry key `model`)
  std::string name;  ///< a registry method name of that model
  grid_axes grid;    ///< the parameters the method takes, as set by the job
  continuation_kind continuation = continuation_kind::none;
};

/// One part of a job split over several archives (`slr-sweep run --shard i/n`): the units whose
/// first point id is listed. Written into the archive's stored job as a trailing [shard] table
/// (shard_text), so that resume, status and query of that archive see the shard's points only,
/// whatever the cost model of a later build; `merge` joins the shards into the whole job.
struct shard_spec {
  std::uint32_t index = 0;           ///< 0 … count−1
  std::uint32_t count = 1;           ///< ≥ 1
  std::vector<std::uint64_t> units;  ///< first point id of each unit of this shard, sorted
};

struct job_spec {
  std::string source_name;     ///< file path or a label such as "results.h5:/job_text" (for messages)
  std::string text;            ///< the job text exactly as read (stored in archives)
  std::string name;            ///< sweep name
  std::string description;     ///< optional free text
  std::uint64_t master_seed = 0;
  std::vector<method_entry> methods; ///< ≥ 1, in file order
  std::optional<shard_spec> shard;   ///< set when the text ends with a [shard] table
};

/// `text` with `shard` appended as its trailing [shard] table (after a marker comment line).
[[nodiscard]] std::string shard_text(const std::string& text, const shard_spec& shard);
/// The job text without its trailing [shard] table: the whole job (`text` itself if it has none).
[[nodiscard]] std::string whole_job_text(const std::string& text);

/// Parses and validates a job from text; source_name is used in error messages.
/// Throws job_error (TOML syntax errors carry line:column).
[[nodiscard]] job_spec parse_job(std::string_view text, std::string source_name);

/// Reads a file and parses it. Throws job_error (field "<file>") if it cannot be read.
[[nodiscard]] job_spec load_job_file(const std::filesystem::path& path);

} // namespace slr::job
