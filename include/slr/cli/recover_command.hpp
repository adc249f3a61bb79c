#pragma once
// `slr-sweep recover results.h5`: rebuilds the .h5 snapshot from the journal (truncating a
// torn tail), e.g. after a crash or when the .h5 was lost. Refuses while a sweep holds the lock.
#include <CLI/CLI.hpp>
#include <functional>

namespace slr::cli {

/// Adds the `recover` subcommand to `app`. The returned function runs it after parsing and returns
/// the exit code, or −1 if the subcommand was not selected. Bad input (unreadable or invalid job
/// file, missing archive) throws std::invalid_argument naming the file, field and reason (the
/// caller prints it and exits with 2).
[[nodiscard]] std::function<int()> add_recover_command(CLI::App& app);
/// Adds the `upgrade` subcommand (an archive of the first schema rewritten as the current one).
[[nodiscard]] std::function<int()> add_upgrade_command(CLI::App& app);

} // namespace slr::cli
