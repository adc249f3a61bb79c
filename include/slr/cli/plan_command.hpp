#pragma once
// `slr-sweep plan job.toml`: expands a job's grid without running anything and prints the
// point count per method entry, the estimated cost (the registry's cost_seconds) and the job
// fingerprint; `--list` prints every point.
#include <CLI/CLI.hpp>
#include <functional>

namespace slr::cli {

/// Adds the `plan` subcommand to `app`. The returned function runs it after parsing and returns
/// the exit code, or −1 if the subcommand was not selected. Bad input (unreadable or invalid job
/// file, missing archive) throws std::invalid_argument naming the file, field and reason (the
/// caller prints it and exits with 2).
[[nodiscard]] std::function<int()> add_plan_command(CLI::App& app);

} // namespace slr::cli
