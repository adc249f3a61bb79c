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
#include "slr/sched/sweep_types.hpp"

namespace slr::sched {

/// Runs `units` on all ranks of `comm` (collective). On rank 0, `already_done(unit, position)` says which
/// points to leave out (resume) and `sink` receives every other point exactly once; both are
/// ignored on other ranks. A unit (α-continuation chain) runs on one worker, in order, each
/// point warm-started from the previous one's record if that one did not fail or time out.
/// Throws std::runtime_error on every rank if the ranks' unit lists differ, and
/// std::invalid_argument for bad options.
sweep_outcome run_sweep(const boost::mpi::communicator& comm, const std::vector<grid::work_unit>& units,
                        const done_predicate& already_done, result_sink* sink,
                        const sweep_options& options);


} // namespace slr::sched
