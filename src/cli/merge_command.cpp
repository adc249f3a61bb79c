#include "slr/cli/merge_command.hpp"

#include <iostream>
#include <memory>

#include "slr/sweep/merge.hpp"

namespace slr::cli {

std::function<int()> add_merge_command(CLI::App& app) {
  auto args = std::make_shared<sweep::merge_arguments>();
  auto* cmd = app.add_subcommand(
      "merge", "Join archives of one job (the shards of `run --shard`, partial or resumed runs) into a new archive");
  cmd->add_option("archives", args->inputs, "Archives to merge (read only; each point once, copies must agree)")
      ->required();
  cmd->add_option("-o,--output", args->output, "Archive to create (must not exist)")->required();
  cmd->footer("Every input must hold the same job (fingerprint); a point present in several inputs must agree bit "
              "for bit (timings aside). Points of the job that no input holds are listed as missing: "
              "`slr-sweep resume OUTPUT` computes them.");
  return [args, cmd]() -> int {
    if (!*cmd) return -1;
    const auto report = sweep::merge(*args);
    std::cerr << "slr-sweep: merged " << report.inputs << " archive(s) of job '" << report.job_name << "' (fingerprint "
              << report.fingerprint << ") into " << args->output << ": " << report.points << " of " << report.job_points
              << " points";
    if (report.duplicates > 0) std::cerr << " (" << report.duplicates << " duplicate copies agreed)";
    std::cerr << "\n";
    if (report.points < report.job_points)
      std::cerr << "slr-sweep: " << report.job_points - report.points << " points of the job are in no input: `slr-sweep resume "
                << args->output << "` computes them\n";
    return 0;
  };
}

} // namespace slr::cli
