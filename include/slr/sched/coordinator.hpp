#pragma once
// The coordinator (rank 0): dynamic self-scheduling of work units, most expensive first, under
// a per-node memory budget; gathers results into a result_sink; drains on a stop signal.
#include <cstddef>
#include <functional>
#include <vector>

#include <boost/mpi/communicator.hpp>

#include "slr/sched/sweep.hpp"

namespace slr::sched {

/// Where the workers run: worker_ranks[i] lives on node worker_nodes[i]; node_budget[n] is the
/// memory (bytes) points may use at once on node n.
struct cluster_layout {
  std::vector<int> worker_ranks;
  std::vector<int> worker_nodes;
  std::vector<std::size_t> node_budget;
};

/// Runs the coordinator loop on rank 0 until every unit is finished or a stop signal's grace
/// period ends, then stops all workers. Rethrows sink errors after stopping the workers.
sweep_outcome run_coordinator(const boost::mpi::communicator& comm, const std::vector<grid::work_unit>& units,
                              const done_predicate& already_done, result_sink& sink,
                              const sweep_options& options, const cluster_layout& layout);

} // namespace slr::sched
