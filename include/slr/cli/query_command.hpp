#pragma once
// `slr-sweep query results.h5 [--where …] [--status …] [--group-by …] [--min-over …]
//  [--columns …] [--format table|csv|jsonl] [-o FILE]`: rows of an archive on stdout (read-only).
#include <CLI/CLI.hpp>
#include <functional>

namespace slr::cli {

/// Adds the `query` subcommand. The returned function runs it after parsing (−1 if the command
/// was not selected) and returns the exit code; it throws std::invalid_argument for bad input.
[[nodiscard]] std::function<int()> add_query_command(CLI::App& app);

} // namespace slr::cli
