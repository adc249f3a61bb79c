// The coordinator: dynamic self-scheduling. Units are ordered most expensive first (summed
// cost_seconds of their points; ties by index) and handed out in small batches so that each
// worker holds about `prefetch_s` of estimated work (at least one unit, at most max_outstanding):
// expensive units go one at a time (load balance; the tail imbalance is at most one unit or
// prefetch_s), cheap ones are queued on the worker so it never waits for a round trip.
// A unit reserves max over its points of memory_bytes on its worker's node from assignment until
// the worker reports it released; a node never runs more than its budget. The first unit that
// could ever fit a node but does not fit now blocks that node's queue (no backfill past it), so
// big units are not starved by small ones.
#include "slr/sched/coordinator.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <map>
#include <optional>
#include <stdexcept>
#include <iostream>
#include <numeric>
#include <string>
#include <thread>

#include "protocol.hpp"
#include "slr/methods/registry.hpp"
#include "slr/sched/progress.hpp"
#include "slr/sched/stop_signals.hpp"

namespace slr::sched {
namespace {
using clock = std::chrono::steady_clock;

constexpr double prefetch_s = 0.1;            // estimated work a worker holds (hides the round trip)
constexpr double cost_floor_s = 5e-5;         // per unit, for trivial estimates (messaging overhead)
constexpr std::size_t max_outstanding = 2 * protocol::max_batch;
constexpr double flush_interval_s = 0.25;     // durability lag of a busy stream of results
constexpr std::size_t flush_rows = 4096;
constexpr double min_flush_gap_s = 0.05;

enum class unit_phase { pending, assigned, finished };

struct unit_state {
  double cost = 0;
  double remaining_cost = 0; // estimates of the points of this run not recorded yet
  std::size_t memory = 0;
  std::vector<bool> wanted; // per position: record it (false: done before this run)
  std::size_t unreported = 0;
  unit_phase phase = unit_phase::pending;
  bool holds_memory = false;
  int worker = -1;
};

struct worker_state {
  int rank = 0;
  int node = 0;
  std::size_t outstanding = 0; // assigned units not finished
  double outstanding_cost = 0;
  bool drained = false;
  bool goodbye = false;
};

std::string describe_signal(int signal_number) {
  switch (signal_number) {
  case SIGTERM: return "SIGTERM";
  case SIGINT: return "SIGINT";
  case SIGUSR1: return "SIGUSR1";
  default: return "signal " + std::to_string(signal_number);
  }
}

class coordinator {
public:
  coordinator(const boost::mpi::communicator& comm, const std::vector<grid::work_unit>& units,
              const done_predicate& already_done, result_sink& sink,
              const sweep_options& options, const cluster_layout& layout)
      : comm_(comm), units_(units), sink_(sink), options_(options), node_free_(layout.node_budget),
        node_budget_(layout.node_budget),
        meter_(std::cerr, progress_meter::stderr_is_terminal(), options.progress_interval_s) {
    for (std::size_t i = 0; i < layout.worker_ranks.size(); ++i)
      workers_.push_back({layout.worker_ranks[i], layout.worker_nodes[i]});
    for (std::size_t i = 0; i < workers_.size(); ++i) worker_of_rank_[workers_[i].rank] = i;
    plan(already_done);
  }

  sweep_outcome run() {
    try {
      record_unplaceable();
      for (auto& w : workers_) top_up(w);
      main_loop();
    } catch (const std::exception& e) {
      // The sink failed (disk full, …): stop the workers so no rank hangs, then report. Results
      // that still arrive are dropped (never acknowledged: `resume` computes them again).
      sink_failed_ = true;
      bool stopped = false;
      try {
        shut_down(1);
        stopped = true;
      } catch (...) {
      }
      if (stopped) throw stopped_by_error(e.what());
      throw;
    } catch (...) {
      sink_failed_ = true;
      try {
        shut_down(1);
      } catch (...) {
      }
      throw;
    }
    const bool complete = finished_units_ == units_to_run_;
    shut_down(complete ? 0 : exit_incomplete);
    outcome_.exit_code = complete ? 0 : exit_incomplete;
    outcome_.stop_signal = complete ? 0 : (stop_signal() != 0 ? stop_signal() : forwarded_signal_);
    outcome_.abandoned_units = units_to_run_ - finished_units_;
    outcome_.recorded_points = flushed_;
    outcome_.failed_points = failed_;
    outcome_.timeout_points = timeouts_;
    if (options_.show_progress)
      meter_.finish(progress(), complete ? "complete"
                                         : "stopped by " + describe_signal(outcome_.stop_signal) + " (resumable, " +
                                               std::to_string(outcome_.abandoned_units) + " units left)");
    return outcome_;
  }

private:
  void plan(const done_predicate& already_done) {
    states_.resize(units_.size());
    for (std::size_t u = 0; u < units_.size(); ++u) {
      auto& state = states_[u];
      const auto& points = units_[u].points;
      state.wanted.assign(points.size(), true);
      outcome_.total_points += points.size();
      std::size_t wanted = 0;
      for (std::size_t p = 0; p < points.size(); ++p) {
        const auto& method = methods::find_method(points[p]);
        state.cost += method.cost_seconds(points[p]);
        state.memory = std::max(state.memory, method.memory_bytes(points[p]));
        if (already_done && already_done(u, p)) {
          state.wanted[p] = false;
          ++outcome_.skipped_points;
        } else {
          ++wanted;
          wanted_cost_ += method.cost_seconds(points[p]);
          state.remaining_cost += method.cost_seconds(points[p]);
          eta_.add_planned(points[p].method, method.cost_seconds(points[p]));
        }
      }
      // A chain with some points done runs again from its start (the warm starts must be
      // recomputed); only its missing points are recorded. run_sweep splits such chains into
      // units of missing points warm-started from stored records when it has them.
      state.unreported = points.size();
      if (wanted == 0) {
        state.phase = unit_phase::finished;
        continue;
      }
      ++units_to_run_;
      order_.push_back(u);
    }
    std::stable_sort(order_.begin(), order_.end(),
                     [&](std::size_t a, std::size_t b) { return states_[a].cost > states_[b].cost; });
  }

  // Units that no node's budget can hold are recorded as failed at once instead of waiting forever.
  void record_unplaceable() {
    std::size_t largest = 0; // over nodes that host a worker (rank 0 may sit alone on a node)
    for (const auto& w : workers_) largest = std::max(largest, node_budget_[static_cast<std::size_t>(w.node)]);
    for (const auto u : order_) {
      auto& state = states_[u];
      if (state.memory <= largest) continue;
      grid::result_record record;
      record.status = grid::status::failed;
      record.message = "needs " + std::to_string(state.memory >> 20) + " MiB but the largest node budget is " +
                       std::to_string(largest >> 20) + " MiB (--mem-per-node)";
      for (std::size_t p = 0; p < state.wanted.size(); ++p) record_point(u, p, record);
      state.unreported = 0;
      state.phase = unit_phase::finished;
      ++finished_units_;
    }
    flush_sink();
  }

  void record_point(std::size_t unit, std::size_t position, const grid::result_record& record) {
    auto& state = states_[unit];
    if (!state.wanted[position] || sink_failed_) return; // done before this run (partial chain) or a duplicate
    state.wanted[position] = false;
    sink_.record(unit, position, units_[unit].points[position], record);
    ++recorded_;
    const auto& point = units_[unit].points[position];
    const double estimate = methods::find_method(point).cost_seconds(point);
    done_cost_ += estimate;
    state.remaining_cost = std::max(0.0, state.remaining_cost - estimate);
    eta_.add_finished(point.method, estimate, record.get("wall_s"));
    if (record.status == grid::status::failed) ++failed_;
    if (record.status == grid::status::timeout) ++timeouts_;
    if (record.status != grid::status::ok) ++not_ok_[std::string(grid::status_name(record.status))];
  }

  // Next unit for a worker on `node`, or none: the most expensive pending unit that fits the
  // node's free memory, never skipping one that could fit the node later.
  std::optional<std::size_t> next_unit(int node) {
    while (head_ < order_.size() && states_[order_[head_]].phase != unit_phase::pending) ++head_;
    for (std::size_t i = head_; i < order_.size(); ++i) {
      const auto& state = states_[order_[i]];
      if (state.phase != unit_phase::pending) continue;
      if (state.memory > node_budget_[static_cast<std::size_t>(node)]) continue; // never fits here
      if (state.memory <= node_free_[static_cast<std::size_t>(node)]) return order_[i];
      return std::nullopt; // wait until it fits
    }
    return std::nullopt;
  }

  void top_up(worker_state& worker) {
    if (draining_) return;
    if (worker.outstanding > 0 && worker.outstanding_cost >= prefetch_s) return;
    protocol::order message;
    message.kind = protocol::order_kind::assign;
    std::size_t count = 0;
    while (count < protocol::max_batch && worker.outstanding < max_outstanding &&
           (worker.outstanding == 0 || worker.outstanding_cost < prefetch_s)) {
      const auto unit = next_unit(worker.node);
      if (!unit) break;
      auto& state = states_[*unit];
      state.phase = unit_phase::assigned;
      state.worker = worker.rank;
      state.holds_memory = true;
      node_free_[static_cast<std::size_t>(worker.node)] -= state.memory;
      ++worker.outstanding;
      worker.outstanding_cost += std::max(state.cost, cost_floor_s);
      message.units[count++] = static_cast<std::int64_t>(*unit);
    }
    if (count == 0) return;
    message.argument = static_cast<std::int64_t>(count);
    protocol::send_order(comm_, worker.rank, message);
  }

  void release_memory(std::size_t unit) {
    auto& state = states_[unit];
    if (!state.holds_memory) return;
    state.holds_memory = false;
    node_free_[static_cast<std::size_t>(workers_[worker_of_rank_.at(state.worker)].node)] += state.memory;
  }

  void unit_left_worker(std::size_t unit) {
    auto& worker = workers_[worker_of_rank_.at(states_[unit].worker)];
    --worker.outstanding;
    worker.outstanding_cost = worker.outstanding == 0 ? 0 : worker.outstanding_cost - std::max(states_[unit].cost, cost_floor_s);
  }

  void handle(const protocol::incoming_report& incoming) {
    auto& worker = workers_[worker_of_rank_.at(incoming.source)];
    const auto check_unit = [&](std::int64_t unit) {
      if (unit < 0 || static_cast<std::size_t>(unit) >= units_.size() || states_[static_cast<std::size_t>(unit)].worker != worker.rank)
        throw std::runtime_error("protocol error: rank " + std::to_string(worker.rank) + " reported unit " +
                                 std::to_string(unit) + " it was not given");
      return static_cast<std::size_t>(unit);
    };
    for (const auto& result : incoming.message.results) {
      const auto unit = check_unit(result.unit);
      auto& state = states_[unit];
      if (state.phase != unit_phase::assigned || result.position < 0 ||
          static_cast<std::size_t>(result.position) >= state.wanted.size())
        continue;
      record_point(unit, static_cast<std::size_t>(result.position), result.record);
      if (--state.unreported == 0) {
        state.phase = unit_phase::finished;
        ++finished_units_;
        unit_left_worker(unit);
      }
    }
    for (const auto unit : incoming.message.released) release_memory(check_unit(unit));
    for (const auto dropped : incoming.message.dropped) {
      const auto unit = check_unit(dropped);
      if (states_[unit].phase != unit_phase::assigned) continue;
      release_memory(unit);
      unit_left_worker(unit);
      states_[unit].phase = unit_phase::pending; // never started: a resume runs it
    }
    if (incoming.message.stop_signal != 0 && forwarded_signal_ == 0) forwarded_signal_ = incoming.message.stop_signal;
    worker.drained = worker.drained || incoming.message.drained;
    worker.goodbye = worker.goodbye || incoming.message.goodbye;
  }

  progress_state progress() const {
    progress_state s;
    s.total = outcome_.total_points;
    s.done_before = outcome_.skipped_points;
    s.done = outcome_.skipped_points + flushed_;
    s.not_ok = not_ok_;
    s.total_cost = wanted_cost_;
    s.done_cost = done_cost_;
    // A unit runs on one worker: the sweep takes at least its largest unfinished unit.
    std::map<std::string, double> largest;
    for (std::size_t u = 0; u < states_.size(); ++u)
      if (states_[u].phase != unit_phase::finished && states_[u].remaining_cost > 0) {
        auto& slot = largest[units_[u].points.front().method];
        slot = std::max(slot, states_[u].remaining_cost);
      }
    s.remaining_s = eta_.remaining_s(static_cast<double>(std::max<std::size_t>(1, workers_.size())), largest);
    return s;
  }

  void flush_sink() {
    if (recorded_ == flushed_ || sink_failed_) return;
    sink_.flush();
    flushed_ = recorded_;
    last_flush_ = clock::now();
  }

  void main_loop() {
    auto poll = std::chrono::microseconds(10);
    clock::time_point deadline{};
    int signals_seen = 0;
    last_flush_ = clock::now();
    while (finished_units_ < units_to_run_) {
      // A signal of this process, or one a worker received (forwarded in its report). Only a
      // second signal of this process cuts the grace period short.
      const int local_signals = stop_signal_count();
      const int requested = local_signals > 0 ? stop_signal() : forwarded_signal_;
      if (requested != 0 && !draining_) {
        draining_ = true;
        deadline = clock::now() +
                   std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(options_.grace_s));
        std::cerr << (progress_meter::stderr_is_terminal() ? "\n" : "") << "slr-sweep: " << describe_signal(requested)
                  << " received: no new points; waiting up to " << options_.grace_s
                  << " s for running points, then saving and exiting with code 3 (resume with `slr-sweep resume`)"
                  << std::endl;
        for (auto& w : workers_) protocol::send_order(comm_, w.rank, {protocol::order_kind::drain, 0, {}});
        flush_sink();
        sink_.checkpoint();
      } else if (draining_ && local_signals >= 2 && local_signals != signals_seen) {
        deadline = clock::now(); // a second signal: do not wait any longer
      }
      signals_seen = local_signals;
      bool received = false;
      for (int i = 0; i < 256; ++i) {
        auto incoming = protocol::try_receive_report(comm_);
        if (!incoming) break;
        handle(*incoming);
        received = true;
      }
      if (received && !draining_)
        for (auto& w : workers_) top_up(w);
      const auto now = clock::now();
      // Durability lag ≤ flush_interval_s; when results pause, flush sooner, but not more often
      // than every min_flush_gap_s (each flush is an fsync: batching is what makes throughput).
      const double since_flush = std::chrono::duration<double>(now - last_flush_).count();
      if (recorded_ > flushed_ && (recorded_ - flushed_ >= flush_rows || since_flush >= flush_interval_s ||
                                   (!received && since_flush >= min_flush_gap_s)))
        flush_sink();
      if (options_.show_progress) meter_.update(progress());
      if (draining_) {
        const bool all_drained =
            std::all_of(workers_.begin(), workers_.end(), [](const worker_state& w) { return w.drained; });
        if (all_drained || now >= deadline) break;
      }
      if (received) {
        poll = std::chrono::microseconds(10);
      } else {
        std::this_thread::sleep_for(poll);
        poll = std::min(poll * 2, std::chrono::microseconds(1000));
      }
    }
    flush_sink();
  }

  // Stop every worker and collect its goodbye; results that still arrive are recorded.
  void shut_down(int exit_code) {
    for (auto& w : workers_) protocol::send_order(comm_, w.rank, {protocol::order_kind::stop, exit_code, {}});
    while (!std::all_of(workers_.begin(), workers_.end(), [](const worker_state& w) { return w.goodbye; })) {
      if (auto incoming = protocol::try_receive_report(comm_)) handle(*incoming);
      else std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    flush_sink();
  }

  const boost::mpi::communicator& comm_;
  const std::vector<grid::work_unit>& units_;
  result_sink& sink_;
  bool sink_failed_ = false; ///< the sink threw: nothing more is recorded
  sweep_options options_;
  std::vector<std::size_t> node_free_;
  std::vector<std::size_t> node_budget_;
  std::vector<worker_state> workers_;
  std::map<int, std::size_t> worker_of_rank_;
  std::vector<unit_state> states_;
  std::vector<std::size_t> order_;
  std::size_t head_ = 0;
  std::size_t units_to_run_ = 0;
  std::size_t finished_units_ = 0;
  std::size_t recorded_ = 0;
  std::size_t flushed_ = 0;
  std::size_t failed_ = 0;
  std::size_t timeouts_ = 0;
  double wanted_cost_ = 0;
  eta_model eta_; // per-method calibrated remaining time
  double done_cost_ = 0;
  bool draining_ = false;
  int forwarded_signal_ = 0; // a stop signal a worker received
  std::map<std::string, std::size_t> not_ok_; // points of this run by non-ok status
  clock::time_point last_flush_{};
  progress_meter meter_;
  sweep_outcome outcome_;
};
} // namespace

sweep_outcome run_coordinator(const boost::mpi::communicator& comm, const std::vector<grid::work_unit>& units,
                              const done_predicate& already_done, result_sink& sink,
                              const sweep_options& options, const cluster_layout& layout) {
  coordinator c(comm, units, already_done, sink, options, layout);
  return c.run();
}

} // namespace slr::sched
