#pragma once
// `run` and `resume` of a sweep: job file → expanded grid → MPI scheduler → archive. Both are
// collective over MPI_COMM_WORLD (the caller owns the MPI environment). Rank 0 alone touches
// files (job file, archive); it validates everything before creating anything, then broadcasts
// the job text, which every rank expands into the same units.
// Exit codes: 0 complete, 3 interrupted by a signal (resumable), 2 bad input (job file,
// arguments, existing/missing/locked archive; nothing created or changed), 1 fatal.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "slr/job/expansion.hpp"

namespace slr::sweep {

struct sweep_arguments {
  std::string job_path;     ///< run: the job file
  std::string archive_path; ///< run: the archive to create; resume: the archive to continue
  std::string extend_path;  ///< resume: replace the stored job by this extended job first (optional)
  std::string shard;        ///< run: "i/n" to sweep shard i (0 … n−1) of n only (job::partition); empty: all
  bool retry_failed = false; ///< resume: also run points recorded failed or timeout again
  bool retry_not_converged = false; ///< resume: also run points recorded not_converged again
  double grace_s = 20;       ///< seconds running points may finish after a stop signal
  std::string mem_per_node;  ///< memory for concurrently running points per node, e.g. "64G" (empty: MemAvailable)
  double point_timeout_s = std::numeric_limits<double>::infinity(); ///< wall-time cap per point
  unsigned threads_per_worker = 1;  ///< threads of each solve (0 = all cores of the node)
  double progress_interval_s = 30;  ///< seconds between progress log lines when stderr is not a terminal
  std::uint64_t max_points = job::default_max_points; ///< refuse a job whose axes multiply to more points
};

/// The shard "i/n" of `run --shard` and `plan --shard` as (i, n); throws std::invalid_argument
/// naming the option unless 0 ≤ i < n.
[[nodiscard]] std::pair<std::uint32_t, std::uint32_t> parse_shard_option(const std::string& text);

/// `slr-sweep run JOB -o ARCHIVE`: creates the archive (refused if it exists) and sweeps every
/// point, or with `shard` only that shard's units (the archive stores the job with its [shard]
/// table and the whole job's fingerprint).
[[nodiscard]] int run(const sweep_arguments& args);
/// `slr-sweep resume ARCHIVE`: sweeps the points the archive lacks (job read from the archive).
[[nodiscard]] int resume(const sweep_arguments& args);

} // namespace slr::sweep
