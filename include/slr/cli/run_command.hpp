#pragma once
// `slr-sweep run job.toml -o results.h5` and `slr-sweep resume results.h5`: the MPI sweeps.
// Both are collective over MPI_COMM_WORLD (main creates the MPI environment when one of them is
// selected). Exit codes: 0 complete, 3 interrupted by a signal (resumable), 2 bad input (job
// file, arguments, existing/missing/locked archive; nothing created or changed), 1 fatal.
#include <CLI/CLI.hpp>
#include <functional>

namespace slr::cli {

/// The names of the two sweep subcommands (main takes their stop signals over before anything).
inline constexpr const char* run_command_name = "run";
inline constexpr const char* resume_command_name = "resume";

struct sweep_commands {
  std::function<bool()> selected; ///< after parsing: whether `run` or `resume` was chosen
  std::function<int()> run;       ///< runs the chosen one and returns the exit code
};

/// Adds `run` and `resume` to `app`.
[[nodiscard]] sweep_commands add_sweep_commands(CLI::App& app);

} // namespace slr::cli
