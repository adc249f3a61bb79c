// The worker: its main thread talks MPI and watches the clock; a solver thread runs the points.
// Keeping MPI out of the solver thread means a worker always answers drain/stop orders and can
// enforce the wall-time cap even on a solver that never returns: after the hard cap the main
// thread reports the point as timeout, abandons that solver thread (C++ threads cannot be
// killed) and starts a fresh one for the rest of the queue. The abandoned thread's unit keeps
// its memory reservation until the thread really ends (it then reports "released").
#include "slr/sched/worker.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include "protocol.hpp"
#include "slr/methods/registry.hpp"
#include "slr/sched/stop_signals.hpp"

namespace slr::sched {
namespace {
using clock = std::chrono::steady_clock;

std::atomic<bool> abandoned_any{false};

struct worker_shared {
  std::mutex mutex;
  std::condition_variable solver_wakeup; // queue filled, quit, or generation changed
  std::condition_variable main_wakeup;   // outbox filled
  std::deque<std::int64_t> queue;        // assigned units not yet started
  std::vector<protocol::point_result> results;
  std::vector<std::int64_t> released;
  unsigned generation = 0; // the solver thread of this generation is the live one
  bool quit = false;
  // What the live solver thread is doing.
  bool busy = false;
  std::int64_t current_unit = -1;
  std::size_t current_position = 0;
  clock::time_point started{};
  clock::time_point last_notify{};
};

bool warm_start_usable(const grid::result_record& record) {
  return record.status != grid::status::failed && record.status != grid::status::timeout;
}

void solver_loop(std::shared_ptr<worker_shared> shared, unsigned generation, const std::vector<grid::work_unit>* units,
                 methods::run_context context) {
  std::unique_lock lock(shared->mutex);
  for (;;) {
    shared->solver_wakeup.wait(lock, [&] {
      return shared->quit || shared->generation != generation || !shared->queue.empty();
    });
    if (shared->quit || shared->generation != generation) return;
    const std::int64_t unit = shared->queue.front();
    shared->queue.pop_front();
    shared->busy = true;
    shared->current_unit = unit;
    // A copy: an abandoned solver thread may outlive the caller's unit list.
    const auto points = (*units)[static_cast<std::size_t>(unit)].points;
    // The first point starts from the unit's stored warm start (a resumed chain), if any.
    const auto first_warm_start = (*units)[static_cast<std::size_t>(unit)].warm_start;
    grid::result_record previous;
    for (std::size_t position = 0; position < points.size(); ++position) {
      shared->current_position = position;
      shared->started = clock::now();
      lock.unlock();
      methods::run_context point_context = context;
      if (position > 0)
        point_context.warm_start = warm_start_usable(previous) ? &previous : nullptr;
      else
        point_context.warm_start = first_warm_start && warm_start_usable(*first_warm_start) ? &*first_warm_start : nullptr;
      auto record = methods::solve_point(points[position], point_context);
      lock.lock();
      if (shared->generation != generation) {
        // Abandoned by the watchdog (or at stop): its results were already reported as
        // timeout; only the memory is given back now.
        shared->released.push_back(unit);
        shared->main_wakeup.notify_one();
        return;
      }
      shared->results.push_back({unit, static_cast<std::int64_t>(position), record});
      // Wake the MPI thread for a batch, when the queue runs dry, or after a slow point; cheap
      // points otherwise accumulate (the MPI thread also wakes by itself every ≤ 2 ms).
      const auto now = clock::now();
      if (shared->results.size() >= 32 || shared->queue.empty() || now - shared->last_notify > std::chrono::milliseconds(1)) {
        shared->last_notify = now;
        shared->main_wakeup.notify_one();
      }
      previous = std::move(record);
    }
    shared->released.push_back(unit);
    shared->busy = false;
    shared->current_unit = -1;
    shared->main_wakeup.notify_one();
  }
}

// The wall-time cap after which a solver that did not stop by itself is abandoned: cooperative
// solvers get a little slack to notice the cap and return their own timeout record.
double hard_cap_seconds(double point_timeout_s) {
  return std::isfinite(point_timeout_s) ? point_timeout_s * 1.05 + 1.0 : std::numeric_limits<double>::infinity();
}
} // namespace

bool solver_threads_abandoned() noexcept { return abandoned_any.load(); }

int run_worker(const boost::mpi::communicator& comm, const std::vector<grid::work_unit>& units,
               const sweep_options& options) {
  auto shared = std::make_shared<worker_shared>();
  const methods::run_context context{options.threads_per_worker, options.point_timeout_s, nullptr};
  const double hard_cap = hard_cap_seconds(options.point_timeout_s);
  std::thread solver(solver_loop, shared, 0U, &units, context);

  bool draining = false;
  bool drained_sent = false;
  bool signal_forwarded = false;
  std::list<protocol::report_in_flight> in_flight;
  int exit_code = -1;
  auto poll = std::chrono::microseconds(20);
  while (exit_code < 0) {
    protocol::report outgoing;
    bool activity = false;
    while (auto message = protocol::try_receive_order(comm)) {
      activity = true;
      std::lock_guard lock(shared->mutex);
      switch (message->kind) {
      case protocol::order_kind::assign:
        for (std::int64_t i = 0; i < message->argument; ++i) {
          const auto unit = message->units[static_cast<std::size_t>(i)];
          if (unit < 0 || static_cast<std::size_t>(unit) >= units.size()) comm.abort(1); // protocol violation
          shared->queue.push_back(unit);
        }
        shared->solver_wakeup.notify_all();
        break;
      case protocol::order_kind::drain:
        draining = true;
        outgoing.dropped.assign(shared->queue.begin(), shared->queue.end());
        shared->queue.clear();
        break;
      case protocol::order_kind::stop: exit_code = static_cast<int>(message->argument); break;
      }
      if (exit_code >= 0) break;
    }
    {
      std::unique_lock lock(shared->mutex);
      // The watchdog: a solver past the hard cap is abandoned and replaced.
      if (shared->busy && std::chrono::duration<double>(clock::now() - shared->started).count() > hard_cap) {
        const auto unit = shared->current_unit;
        const auto& points = units[static_cast<std::size_t>(unit)].points;
        for (std::size_t position = shared->current_position; position < points.size(); ++position) {
          grid::result_record record;
          record.status = grid::status::timeout;
          record.message = position == shared->current_position
                               ? "exceeded the per-point wall-time cap of " + grid::format_number(options.point_timeout_s) +
                                     " s; the solver did not stop and was abandoned"
                               : "not started: an earlier point of its continuation chain timed out";
          record.set("wall_s", std::chrono::duration<double>(clock::now() - shared->started).count());
          shared->results.push_back({unit, static_cast<std::int64_t>(position), record});
        }
        ++shared->generation;
        shared->busy = false;
        shared->current_unit = -1;
        shared->solver_wakeup.notify_all();
        solver.detach();
        abandoned_any.store(true);
        solver = std::thread(solver_loop, shared, shared->generation, &units, context);
      }
      if (!shared->results.empty() || !shared->released.empty()) activity = true;
      outgoing.results = std::move(shared->results);
      shared->results.clear();
      outgoing.released = std::move(shared->released);
      shared->released.clear();
      if (draining && !drained_sent && !shared->busy && shared->queue.empty()) {
        outgoing.drained = true;
        drained_sent = true;
      }
    }
    // A signal that reached this worker but maybe not rank 0 (e.g. `kill` of one rank): tell the
    // coordinator, which decides (the worker itself carries on until told to drain or stop).
    if (!signal_forwarded && stop_signal() != 0 && comm.rank() != 0) {
      outgoing.stop_signal = stop_signal();
      signal_forwarded = true;
    }
    // Non-blocking: a large report goes by rendezvous, and a blocking send would spin in MPI
    // (taking the core from the solver thread) while the coordinator is busy with an fsync.
    if (!outgoing.empty()) in_flight.emplace_back(comm, outgoing);
    std::erase_if(in_flight, [](protocol::report_in_flight& r) { return r.done(); });
    if (exit_code >= 0) break;
    if (activity) {
      poll = std::chrono::microseconds(20);
      continue;
    }
    if (!in_flight.empty()) poll = std::min(poll, std::chrono::microseconds(100)); // keep the sends moving
    // Idle: wait for the solver (woken at once) or poll MPI with a growing interval.
    std::unique_lock lock(shared->mutex);
    shared->main_wakeup.wait_for(lock, poll, [&] { return !shared->results.empty() || !shared->released.empty(); });
    poll = std::min(poll * 2, std::chrono::microseconds(2000));
  }

  // Stop: a solver still running (only after the grace period) is abandoned, not waited for.
  protocol::report goodbye;
  {
    std::lock_guard lock(shared->mutex);
    shared->quit = true;
    shared->queue.clear();
    shared->solver_wakeup.notify_all();
    if (shared->busy) {
      ++shared->generation;
      solver.detach();
      abandoned_any.store(true);
    }
    goodbye.results = std::move(shared->results);
    goodbye.released = std::move(shared->released);
  }
  if (solver.joinable()) solver.join();
  for (auto& report : in_flight) report.wait();
  goodbye.goodbye = true;
  protocol::send_report(comm, goodbye);
  return exit_code;
}

} // namespace slr::sched
