#pragma once
// Running a sweep over MPI: rank 0 coordinates and every other rank works; up to
// coordinator_works_up_to ranks rank 0 also works, running the same worker loop in a second
// thread that talks to the coordinator through MPI (needs MPI_THREAD_MULTIPLE), so `mpirun -n N`
// keeps N solvers busy. Every rank passes the same list of work units (all ranks expand the same
// job), so messages carry unit indices, not points.
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <boost/mpi/communicator.hpp>

#include "slr/grid/work_unit.hpp"
#include "slr/sched/result_sink.hpp"
#include "slr/sched/sweep_types.hpp"

namespace slr::sched {

/// Up to this many ranks, rank 0 runs a worker beside the coordinator (workers = ranks); beyond
/// it, rank 0 only coordinates (workers = ranks − 1).
inline constexpr int coordinator_works_up_to = 32;

/// Workers of a sweep on `ranks` ranks.
[[nodiscard]] constexpr int worker_count(int ranks) noexcept {
  return ranks <= coordinator_works_up_to ? ranks : ranks - 1;
}

/// Runs `units` on all ranks of `comm` (collective). On rank 0, `already_done(unit, position)` says which
/// points to leave out (resume) and `sink` receives every other point exactly once; both are
/// ignored on other ranks. A unit (α-continuation chain) runs on one worker, in order, each
/// point warm-started from the previous one's record if that one did not fail or time out. A
/// chain with some points done is resumed from `stored` (rank 0's records of its done points):
/// each run of missing points starts from the record of the done point before it (cold at the
/// chain's start), as in an uninterrupted run, and the done points are not solved again; without
/// `stored` such a chain runs again from its start.
/// Throws std::runtime_error on every rank if the ranks' unit lists differ, and
/// std::invalid_argument for bad options.
sweep_outcome run_sweep(const boost::mpi::communicator& comm, const std::vector<grid::work_unit>& units,
                        const done_predicate& already_done, result_sink* sink,
                        const sweep_options& options, const stored_record& stored = {});


} // namespace slr::sched
