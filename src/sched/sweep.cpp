// run_sweep: the collective set-up shared by all ranks, then the roles. Up to
// coordinator_works_up_to ranks, rank 0 also runs the worker loop, in a second thread that talks
// to the coordinator through MPI exactly as a remote worker would (same code path; needs
// MPI_THREAD_MULTIPLE), so that `mpirun -n N` on N cores keeps N solvers busy.
#include "slr/sched/sweep.hpp"

#include <mpi.h>

#include <algorithm>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/environment.hpp>
#include <cmath>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "slr/model/random.hpp"
#include "slr/sched/coordinator.hpp"
#include "slr/sched/node_memory.hpp"
#include "slr/sched/worker.hpp"

namespace slr::sched {
namespace {
// Hash of every point's canonical text and seed, in unit order: equal on all ranks iff they
// expanded the same job the same way.
std::uint64_t units_digest(const std::vector<grid::work_unit>& units) {
  std::uint64_t digest = model::stable_hash("units");
  for (const auto& unit : units) {
    digest = model::derive_seed(digest, unit.points.size());
    for (const auto& p : unit.points) digest = model::derive_seed(model::derive_seed(digest, p.identity()), p.seed);
  }
  return digest;
}

// Coordination costs rank 0 about 10–50 µs of CPU per finished unit (a report, a flush share, an
// order): with a few dozen workers that is far below 1 % of a core, so a solver thread beside it
// is a whole extra worker. With hundreds of workers finishing short units, rank 0's core is
// needed to answer them without delay, and a solver beside it would slow every worker.
bool coordinator_works(int ranks) { return ranks <= coordinator_works_up_to; }

// Node identity: the lowest world rank among the ranks sharing memory with this one.
cluster_layout gather_layout(const boost::mpi::communicator& comm, const sweep_options& options) {
  MPI_Comm node_comm = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node_comm);
  const boost::mpi::communicator node(node_comm, boost::mpi::comm_take_ownership);
  int leader = comm.rank();
  boost::mpi::broadcast(node, leader, 0);
  unsigned long long memory = 0;
  if (node.rank() == 0) memory = options.mem_per_node > 0 ? options.mem_per_node : available_memory_bytes();
  boost::mpi::broadcast(node, memory, 0);

  std::vector<int> leaders;
  std::vector<unsigned long long> memories;
  boost::mpi::gather(comm, leader, leaders, 0);
  boost::mpi::gather(comm, memory, memories, 0);
  cluster_layout layout;
  if (comm.rank() != 0) return layout;
  std::vector<int> node_leaders = leaders;
  std::sort(node_leaders.begin(), node_leaders.end());
  node_leaders.erase(std::unique(node_leaders.begin(), node_leaders.end()), node_leaders.end());
  layout.node_budget.resize(node_leaders.size());
  for (int r = 0; r < comm.size(); ++r) {
    const auto node_index = static_cast<int>(std::lower_bound(node_leaders.begin(), node_leaders.end(), leaders[static_cast<std::size_t>(r)]) - node_leaders.begin());
    layout.node_budget[static_cast<std::size_t>(node_index)] = memories[static_cast<std::size_t>(r)];
    if (r == 0 && !coordinator_works(comm.size())) continue; // many ranks: rank 0 only coordinates
    layout.worker_ranks.push_back(r);
    layout.worker_nodes.push_back(node_index);
  }
  return layout;
}

void check_options(const sweep_options& options) {
  if (!(options.grace_s >= 0) || !std::isfinite(options.grace_s))
    throw std::invalid_argument("--grace: must be finite and >= 0 seconds");
  if (!(options.point_timeout_s > 0)) throw std::invalid_argument("--point-timeout: must be > 0 seconds");
  if (!(options.progress_interval_s > 0)) throw std::invalid_argument("progress interval must be > 0 seconds");
}
} // namespace

sweep_outcome run_sweep(const boost::mpi::communicator& comm, const std::vector<grid::work_unit>& units,
                        const done_predicate& already_done, result_sink* sink,
                        const sweep_options& options) {
  check_options(options);
  for (const auto& unit : units)
    if (unit.points.empty()) throw std::invalid_argument("a work unit without points");
  std::uint64_t digest = units_digest(units);
  std::uint64_t reference = digest;
  boost::mpi::broadcast(comm, reference, 0);
  const int mismatch = boost::mpi::all_reduce(comm, digest != reference ? 1 : 0, boost::mpi::maximum<int>());
  if (mismatch != 0)
    throw std::runtime_error("the ranks expanded different work units (different job text or program versions?)");
  if (coordinator_works(comm.size()) && boost::mpi::environment::thread_level() < boost::mpi::threading::multiple)
    throw std::runtime_error("rank 0 runs a worker in a thread beside the coordinator and needs MPI_THREAD_MULTIPLE; "
                             "this MPI provides less");

  const auto layout = gather_layout(comm, options);
  if (comm.rank() != 0) {
    sweep_outcome outcome;
    outcome.exit_code = run_worker(comm, units, options);
    return outcome;
  }
  if (sink == nullptr) throw std::invalid_argument("run_sweep: rank 0 needs a result sink");
  if (!coordinator_works(comm.size())) return run_coordinator(comm, units, already_done, *sink, options, layout);

  std::thread local_worker([&] {
    try {
      (void)run_worker(comm, units, options);
    } catch (const std::exception& e) {
      // The coordinator would wait for this worker forever: end the run (resume continues).
      std::cerr << "slr-sweep: fatal: worker thread: " << e.what() << std::endl;
      comm.abort(1);
    }
  });
  sweep_outcome outcome;
  try {
    outcome = run_coordinator(comm, units, already_done, *sink, options, layout);
  } catch (...) {
    local_worker.join(); // the coordinator stopped the worker before rethrowing
    throw;
  }
  local_worker.join();
  return outcome;
}

} // namespace slr::sched
