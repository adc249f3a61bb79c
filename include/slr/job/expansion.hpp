#pragma once
// From a job to the points of the sweep: Cartesian product (with zipped groups) of the axes
// of each method entry × option axes × repeats, every point completed through the method
// registry (defaults filled, values canonical), duplicates removed (finite-α axes collapse for
// population-level methods, erf_offset for non-erf activations), and `continuation = "alpha"`
// entries grouped into chains of increasing α.
//
// Identity: point_id(point, repeat, chained) = stable_hash(point.canonical()) for repeat 0 of an
// unchained point (= grid::point::identity()), else stable_hash(canonical + ";repeat=<r>" +
// ";continuation=alpha" if chained). The seed is model::derive_seed(master_seed, point_id).
// Both depend only on the point's parameters, never on rank count or order.
#include <cstdint>
#include <string>
#include <vector>

#include "slr/grid/point.hpp"
#include "slr/grid/work_unit.hpp"
#include "slr/job/job_file.hpp"

namespace slr::job {

/// A point as the sweep knows it: the completed, seeded grid::point plus its sweep identity.
struct sweep_point {
  grid::point point;        ///< completed (methods::complete_point) with point.seed set
  std::uint32_t repeat = 0; ///< 0 … repeats−1
  std::uint64_t id = 0;     ///< point_id(point, repeat, chained): unique within the job, stable across runs
};

/// What one worker solves in one go: a single point, or a continuation chain (increasing α;
/// each point warm-started from the previous result).
struct sweep_unit {
  std::vector<sweep_point> points; ///< ≥ 1
  std::size_t method_entry = 0;    ///< index into job_spec::methods
  [[nodiscard]] bool is_chain() const noexcept { return points.size() > 1; }
  /// The grid::work_unit to hand to a worker (the points, in order).
  [[nodiscard]] grid::work_unit work_unit() const;
};

/// The sweep identity of a completed point (see the file comment).
[[nodiscard]] std::uint64_t point_id(const grid::point& point, std::uint32_t repeat, bool chained);

/// Default cap on the points a job may expand to (before collapsed axes are merged): far above
/// any figure of the papers (≤ 10⁵ points), far below what would exhaust memory (~1 kB a point).
inline constexpr std::uint64_t default_max_points = 10'000'000;

/// Points of the full product of every entry's axes, option values and repeats (an upper
/// bound of point_count(expand(job)); collapsed axes count in full), computed from the axis
/// sizes without expanding; saturates at UINT64_MAX.
[[nodiscard]] std::uint64_t product_point_count(const job_spec& job);

/// Expands a parsed job into units, in a deterministic order (method entries in file order,
/// then the product of the axes, outermost first; repeats innermost); with a [shard] table only
/// the shard's units (job_error, field shard.units, if one is not a unit of the job). Throws job_error naming
/// the method entry if the registry rejects a point, or if two entries produce overlapping
/// continuation chains, and job_error (field "grid", before any work) if
/// product_point_count(job) exceeds max_points.
[[nodiscard]] std::vector<sweep_unit> expand(const job_spec& job, std::uint64_t max_points = default_max_points);

/// expand() of the whole job, ignoring its [shard] table (the units of every shard).
[[nodiscard]] std::vector<sweep_unit> expand_whole_job(const job_spec& job, std::uint64_t max_points = default_max_points);

/// Estimated single-thread CPU seconds of a unit (the methods' cost models, summed over its points).
[[nodiscard]] double unit_cost_seconds(const sweep_unit& unit);

/// Splits units into `count` shards of similar estimated cost (unit_cost_seconds), whole units
/// only (a continuation chain is never split); deterministic for a given job and build. Every
/// unit is in exactly one shard; a shard may be empty when count exceeds the units. Throws
/// std::invalid_argument for count 0.
[[nodiscard]] std::vector<shard_spec> partition(const std::vector<sweep_unit>& units, std::uint32_t count);

/// The bare grid::work_units of expand(job): what the scheduler hands out.
[[nodiscard]] std::vector<grid::work_unit> work_units(const std::vector<sweep_unit>& units);

/// Number of points in the units.
[[nodiscard]] std::size_t point_count(const std::vector<sweep_unit>& units);

/// Fingerprint of the expanded job: 16 lowercase hex digits of a stable hash of the sorted
/// (point_id, seed) pairs and of the chain structure. Independent of the order of axis values
/// in the file, of comments and of the sweep name; changes with any point, seed or chain. The
/// job_spec overload fingerprints the whole job, so every shard of a job carries its fingerprint.
[[nodiscard]] std::string fingerprint(const std::vector<sweep_unit>& units);
[[nodiscard]] std::string fingerprint(const job_spec& job);

/// Whether `extended` may replace `original` in an archive (`resume --extend`): every point of
/// the original must exist in the extended job with the same id and seed, and the points of every
/// continuation chain of the original must lie in one chain of the extended job, in the same
/// order (a chain may gain α values anywhere; `resume` solves them from the stored record of the
/// old point before them in the chain, cold before its start, and keeps the old points as they are).
struct extension_check {
  bool accepted = false;
  std::string reason;            ///< why not (names the first offending point), empty if accepted
  std::size_t shared_points = 0; ///< points of the original found in the extended job
  std::size_t added_points = 0;  ///< points only in the extended job
};
[[nodiscard]] extension_check check_extension(const std::vector<sweep_unit>& original,
                                              const std::vector<sweep_unit>& extended);

} // namespace slr::job
