#pragma once
// `slr-sweep merge A.h5 B.h5 … -o C.h5`: one archive from several archives of the same job
// (shards of `run --shard`, partial runs, copies); the rules are those of slr/sweep/merge.hpp.
#include <CLI/CLI.hpp>
#include <functional>

namespace slr::cli {

/// Adds `merge` to `app`. The returned function runs it after parsing and returns the exit code
/// (0 merged), or −1 if it was not selected. Refusals throw archive::input_refused_error,
/// archive_exists_error or std::invalid_argument naming the file and the reason (exit 2; nothing
/// written).
[[nodiscard]] std::function<int()> add_merge_command(CLI::App& app);

} // namespace slr::cli
