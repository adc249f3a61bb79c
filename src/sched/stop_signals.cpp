#include "slr/sched/stop_signals.hpp"

#include <atomic>
#include <csignal>

namespace slr::sched {
namespace {
// Lock-free atomics are async-signal-safe; the handler does nothing else.
std::atomic<int> last_signal{0};
std::atomic<int> signal_count{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int signal_number) {
  last_signal.store(signal_number);
  signal_count.fetch_add(1);
}
} // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART; // blocking calls (file I/O, MPI) resume; the coordinator polls the flag
  for (const int s : {SIGTERM, SIGINT, SIGUSR1}) sigaction(s, &action, nullptr);
}

int stop_signal() noexcept { return last_signal.load(); }
int stop_signal_count() noexcept { return signal_count.load(); }

void request_stop(int signal_number) noexcept { on_stop_signal(signal_number); }

void reset_stop() noexcept {
  last_signal.store(0);
  signal_count.store(0);
}

} // namespace slr::sched
