#pragma once
// `slr-sweep status results.h5`: progress of a sweep from its archive (read-only; safe while
// the sweep runs): points done/total, failures by status, rate and ETA from the runs table,
// and how fresh the .h5 snapshot is relative to the journal.
#include <CLI/CLI.hpp>
#include <functional>

namespace slr::cli {

/// Adds the `status` subcommand to `app`. The returned function runs it after parsing and returns
/// the exit code, or −1 if the subcommand was not selected. Bad input (unreadable or invalid job
/// file, missing archive) throws std::invalid_argument naming the file, field and reason (the
/// caller prints it and exits with 2).
[[nodiscard]] std::function<int()> add_status_command(CLI::App& app);

} // namespace slr::cli
