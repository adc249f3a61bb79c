// `run` and `resume` on the command line: the arguments, then slr::sweep does the work.
#include "slr/cli/run_command.hpp"

#include <memory>

#include "slr/sweep/run.hpp"

namespace slr::cli {
namespace {
void add_run_options(CLI::App* cmd, sweep::sweep_arguments& args) {
  cmd->add_option("--grace", args.grace_s,
                  "Seconds running points may finish after SIGTERM/SIGINT/SIGUSR1 before the sweep saves and exits with 3")
      ->capture_default_str();
  cmd->add_option("--mem-per-node", args.mem_per_node,
                  "Memory for concurrently running points per node, e.g. 64G (default: the node's MemAvailable)");
  cmd->add_option("--point-timeout", args.point_timeout_s, "Wall-time cap per point in seconds (records status timeout)");
  cmd->add_option("--threads-per-worker", args.threads_per_worker, "Threads of each solve (0 = all cores of the node)")
      ->capture_default_str();
  cmd->add_option("--max-points", args.max_points,
                  "Refuse a job whose axes multiply to more points than this (checked before expanding)")
      ->capture_default_str();
  cmd->add_option("--progress-interval", args.progress_interval_s,
                  "Seconds between progress log lines when stderr is not a terminal")
      ->capture_default_str();
}
} // namespace

sweep_commands add_sweep_commands(CLI::App& app) {
  auto args = std::make_shared<sweep::sweep_arguments>();
  auto* run = app.add_subcommand(run_command_name, "Run a sweep over MPI (mpirun -n N slr-sweep run job.toml -o results.h5)");
  run->add_option("job", args->job_path, "Job file (TOML, see jobs/README.md)")->required();
  run->add_option("-o,--output", args->archive_path, "Archive to create (HDF5; must not exist)")->required();
  run->add_option("--shard", args->shard,
                  "i/n: sweep only shard i (0 ... n-1) of n, whole units balanced by the cost model "
                  "(`plan JOB --shard i/n` shows it); `slr-sweep merge` joins the shards' archives");
  add_run_options(run, *args);
  auto* resume = app.add_subcommand(resume_command_name, "Run the missing points of an interrupted sweep (job read from the archive)");
  resume->add_option("archive", args->archive_path, "Archive of the sweep")->required();
  resume->add_flag("--retry-failed", args->retry_failed, "Also run points recorded as failed or timeout again");
  resume->add_flag("--retry-not-converged", args->retry_not_converged,
                   "Also run points recorded as not_converged again (after a change of the solver or its defaults; "
                   "the new record replaces the old one)");
  resume->add_option("--extend", args->extend_path,
                     "Replace the job by this extended job first (refused unless every existing point is unchanged)");
  add_run_options(resume, *args);
  return {[run, resume] { return run->parsed() || resume->parsed(); },
          [run, args] { return run->parsed() ? sweep::run(*args) : sweep::resume(*args); }};
}

} // namespace slr::cli
