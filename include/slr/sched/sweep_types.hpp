#pragma once
// Options and outcome of a sweep, without MPI (slr::sweep and the CLI use these; only main and
// src/sched see MPI).
#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>

#include "slr/grid/result_record.hpp"

namespace slr::sched {

struct sweep_options {
  double grace_s = 20.0;             ///< after SIGTERM/SIGINT/SIGUSR1: how long in-flight points may finish (s, ≥ 0)
  std::size_t mem_per_node = 0;      ///< bytes per node for concurrently running points; 0 = MemAvailable of each node
  double point_timeout_s = std::numeric_limits<double>::infinity(); ///< per-point wall-time cap (s, > 0)
  unsigned threads_per_worker = 1;   ///< run_context::threads of every solve (0 = all hardware threads)
  bool show_progress = true;         ///< progress on stderr: a live bar on a terminal, log lines otherwise
  double progress_interval_s = 30.0; ///< period of progress log lines when stderr is not a terminal
};

/// What happened to a sweep (complete on rank 0; on workers only exit_code is meaningful).
struct sweep_outcome {
  std::size_t total_points = 0;     ///< points of all units
  std::size_t skipped_points = 0;   ///< already done before this run (already_done returned true)
  std::size_t recorded_points = 0;  ///< recorded and flushed by this run
  std::size_t failed_points = 0;    ///< of recorded_points: status failed
  std::size_t timeout_points = 0;   ///< of recorded_points: status timeout
  std::size_t abandoned_units = 0;  ///< units left unfinished by a signal (resume runs them)
  int stop_signal = 0;              ///< the signal that interrupted the sweep, or 0
  int exit_code = 0;                ///< 0 complete, 3 interrupted (resumable)
};


/// Thrown by run_world_sweep on rank 0 when an error there (the archive's disk full, a failed
/// write) ended the sweep after every worker had been told to stop: the other ranks return from
/// the sweep with exit code 1 and meet rank 0 at the collective calls that follow, so the caller
/// reports the error and carries on collectively instead of aborting MPI.
class stopped_by_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Exit code of a sweep that was interrupted but can be resumed.
inline constexpr int exit_incomplete = 3;

/// Rank 0's answer to "was point `position` of unit `unit` done before this run?" (resume).
using done_predicate = std::function<bool(std::size_t unit, std::size_t position)>;
/// Rank 0's stored record of a point done before this run (resume): what a chain's next point
/// is warm-started from. nullopt if it has none.
using stored_record = std::function<std::optional<grid::result_record>(std::size_t unit, std::size_t position)>;

/// True once a worker had to abandon a solver thread that ignored the wall-time cap or was
/// still running at stop; such a process should leave with std::_Exit after MPI_Finalize.
[[nodiscard]] bool solver_threads_abandoned() noexcept;

} // namespace slr::sched
