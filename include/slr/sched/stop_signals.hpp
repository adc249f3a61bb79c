#pragma once
// SIGTERM, SIGINT and SIGUSR1 (Slurm's early warning) as a stop request: the handler only
// records the signal; the coordinator polls it and drains. No MPI here.
namespace slr::sched {

/// Installs the handlers (idempotent). Call before the sweep starts, on every rank.
void install_stop_handlers();
/// The last stop signal received (or requested), 0 if none.
[[nodiscard]] int stop_signal() noexcept;
/// How many stop signals arrived (a second one ends the grace period at once).
[[nodiscard]] int stop_signal_count() noexcept;
/// For tests: behave as if `signal_number` had been received.
void request_stop(int signal_number) noexcept;
/// For tests: forget earlier signals.
void reset_stop() noexcept;

} // namespace slr::sched
