#pragma once
// A worker: receives unit indices from rank 0, solves their points in a solver thread while its
// main thread keeps talking MPI (reports, drain/stop orders) and enforces the wall-time cap.
#include <vector>

#include <boost/mpi/communicator.hpp>

#include "slr/grid/work_unit.hpp"
#include "slr/sched/sweep.hpp"

namespace slr::sched {

/// Serves the coordinator (rank 0 of comm) until it says stop; returns the exit code it sent.
int run_worker(const boost::mpi::communicator& comm, const std::vector<grid::work_unit>& units,
               const sweep_options& options);

} // namespace slr::sched
