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
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>

#include "slr/model/random.hpp"
#include "slr/sched/coordinator.hpp"
#include "slr/sched/node_memory.hpp"
#include "protocol.hpp"
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

// Resumed chains. A continuation chain with some points done before this run is split into
// units of its missing points — each maximal run of missing points, in chain order, warm-started
// from the stored record of the done point just before it (a run at the chain's start starts cold)
// — and one unit of its done points (skipped, for the counts). Each missing point thus starts from
// exactly the record an uninterrupted run of the chain would have passed on to it, so the results
// are the same, and the chain's done points are not solved again. Rank 0 knows which points are
// done and their records; it broadcasts them (as a protocol report) and every rank derives the
// same units.
struct derived_unit {
  std::size_t unit = 0;                // index in the caller's list
  std::vector<std::size_t> positions;  // in the caller's unit, in solving order
};
struct derived_plan {
  std::vector<grid::work_unit> units;
  std::vector<derived_unit> origin;    // per derived unit
};

derived_plan derive_units(const boost::mpi::communicator& comm, const std::vector<grid::work_unit>& units,
                          const done_predicate& already_done, const stored_record& stored) {
  std::string bytes;
  if (comm.rank() == 0) {
    protocol::report done;
    for (std::size_t u = 0; u < units.size() && already_done && stored; ++u) {
      const auto n = units[u].points.size();
      if (n < 2) continue;
      std::vector<bool> is_done(n);
      std::size_t count = 0;
      for (std::size_t p = 0; p < n; ++p) count += (is_done[p] = already_done(u, p)) ? 1 : 0;
      if (count == 0 || count == n) continue;
      for (std::size_t p = 0; p < n; ++p) {
        if (!is_done[p]) continue;
        auto record = stored(u, p);
        if (!record) { // done, but nothing to start from: the neighbour starts cold
          record.emplace();
          record->status = grid::status::failed;
        }
        done.results.push_back({static_cast<std::int64_t>(u), static_cast<std::int64_t>(p), std::move(*record)});
      }
    }
    bytes = protocol::encode(done);
  }
  boost::mpi::broadcast(comm, bytes, 0);
  const auto done = protocol::decode(bytes);
  std::map<std::size_t, std::map<std::size_t, const grid::result_record*>> done_of; // unit → position → record
  for (const auto& r : done.results)
    done_of[static_cast<std::size_t>(r.unit)][static_cast<std::size_t>(r.position)] = &r.record;

  derived_plan plan;
  const auto add = [&](std::size_t u, std::vector<std::size_t> positions, const grid::result_record* warm) {
    grid::work_unit w;
    for (const auto p : positions) w.points.push_back(units[u].points[p]);
    if (warm != nullptr) w.warm_start = *warm;
    plan.units.push_back(std::move(w));
    plan.origin.push_back({u, std::move(positions)});
  };
  for (std::size_t u = 0; u < units.size(); ++u) {
    const auto n = units[u].points.size();
    const auto it = done_of.find(u);
    if (it == done_of.end()) {
      std::vector<std::size_t> all(n);
      for (std::size_t p = 0; p < n; ++p) all[p] = p;
      add(u, std::move(all), nullptr);
      continue;
    }
    const auto& stored_points = it->second;
    std::vector<std::size_t> done_positions;
    for (const auto& [p, record] : stored_points) done_positions.push_back(p);
    add(u, done_positions, nullptr); // all skipped
    for (std::size_t i = 0; i < n;) {
      if (stored_points.contains(i)) {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j + 1 < n && !stored_points.contains(j + 1)) ++j;
      std::vector<std::size_t> run;
      for (std::size_t p = i; p <= j; ++p) run.push_back(p);
      add(u, std::move(run), i > 0 ? stored_points.at(i - 1) : nullptr);
      i = j + 1;
    }
  }
  return plan;
}

// The caller's sink and done predicate seen through the derived units.
class derived_sink final : public result_sink {
public:
  derived_sink(result_sink& inner, const std::vector<derived_unit>& origin) : inner_(inner), origin_(origin) {}
  void record(std::size_t unit, std::size_t position, const grid::point& point,
              const grid::result_record& record) override {
    const auto& o = origin_[unit];
    inner_.record(o.unit, o.positions[position], point, record);
  }
  void flush() override { inner_.flush(); }
  void checkpoint() noexcept override { inner_.checkpoint(); }

private:
  result_sink& inner_;
  const std::vector<derived_unit>& origin_;
};

void check_options(const sweep_options& options) {
  if (!(options.grace_s >= 0) || !std::isfinite(options.grace_s))
    throw std::invalid_argument("--grace: must be finite and >= 0 seconds");
  if (!(options.point_timeout_s > 0)) throw std::invalid_argument("--point-timeout: must be > 0 seconds");
  if (!(options.progress_interval_s > 0)) throw std::invalid_argument("progress interval must be > 0 seconds");
}
} // namespace

sweep_outcome run_sweep(const boost::mpi::communicator& comm, const std::vector<grid::work_unit>& given,
                        const done_predicate& given_done, result_sink* given_sink,
                        const sweep_options& options, const stored_record& stored) {
  check_options(options);
  for (const auto& unit : given)
    if (unit.points.empty()) throw std::invalid_argument("a work unit without points");
  std::uint64_t digest = units_digest(given);
  std::uint64_t reference = digest;
  boost::mpi::broadcast(comm, reference, 0);
  const int mismatch = boost::mpi::all_reduce(comm, digest != reference ? 1 : 0, boost::mpi::maximum<int>());
  if (mismatch != 0)
    throw std::runtime_error("the ranks expanded different work units (different job text or program versions?)");
  if (coordinator_works(comm.size()) && boost::mpi::environment::thread_level() < boost::mpi::threading::multiple)
    throw std::runtime_error("rank 0 runs a worker in a thread beside the coordinator and needs MPI_THREAD_MULTIPLE; "
                             "this MPI provides less");

  const auto plan = derive_units(comm, given, given_done, stored);
  const auto& units = plan.units;
  std::optional<derived_sink> mapped_sink;
  if (given_sink != nullptr) mapped_sink.emplace(*given_sink, plan.origin);
  result_sink* sink = mapped_sink ? &*mapped_sink : nullptr;
  done_predicate already_done;
  if (given_done)
    already_done = [&](std::size_t u, std::size_t p) { return given_done(plan.origin[u].unit, plan.origin[u].positions[p]); };

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
