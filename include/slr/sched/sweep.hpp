#pragma once
// Running a sweep over MPI: rank 0 coordinates, every other rank works (with one rank, rank 0
// runs the same worker loop in a second thread and talks to itself through MPI, which needs
// MPI_THREAD_MULTIPLE). Every rank passes the same list of work units (all ranks expand the
// same job), so messages carry unit indices, not points.
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <boost/mpi/communicator.hpp>

#include "slr/grid/work_unit.hpp"
#include "slr/sched/result_sink.hpp"

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

/// Exit code of a sweep that was interrupted but can be resumed.
inline constexpr int exit_incomplete = 3;

/// Runs `units` on all ranks of `comm` (collective). On rank 0, `already_done(point)` says which
/// points to leave out (resume) and `sink` receives every other point exactly once; both are
/// ignored on other ranks. A unit (α-continuation chain) runs on one worker, in order, each
/// point warm-started from the previous one's record if that one did not fail or time out.
/// Throws std::runtime_error on every rank if the ranks' unit lists differ, and
/// std::invalid_argument for bad options.
sweep_outcome run_sweep(const boost::mpi::communicator& comm, const std::vector<grid::work_unit>& units,
                        const std::function<bool(const grid::point&)>& already_done, result_sink* sink,
                        const sweep_options& options);

/// True once a worker had to abandon a solver thread that ignored the wall-time cap or was
/// still running at stop; such a process should leave with std::_Exit after MPI_Finalize.
[[nodiscard]] bool solver_threads_abandoned() noexcept;

} // namespace slr::sched
