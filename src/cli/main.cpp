// slr-sweep: the command-line entry point. Subcommands live in src/cli/*_command.cpp.
#include <CLI/CLI.hpp>
#include <boost/mpi/environment.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string_view>

#include "slr/archive/archive_error.hpp"
#include "slr/cli/export_command.hpp"
#include "slr/cli/merge_command.hpp"
#include "slr/cli/outputs_command.hpp"
#include "slr/cli/parameters_command.hpp"
#include "slr/cli/plan_command.hpp"
#include "slr/cli/plot_command.hpp"
#include "slr/cli/point_command.hpp"
#include "slr/cli/query_command.hpp"
#include "slr/cli/recover_command.hpp"
#include "slr/cli/run_command.hpp"
#include "slr/cli/status_command.hpp"
#include "slr/sched/stop_signals.hpp"
#include "slr/sched/world.hpp"
#include "slr/sweep/point_row.hpp"

namespace {
// `run` and `resume` inside MPI (MPI_THREAD_MULTIPLE: with one rank the worker is a thread of
// rank 0). An error escaping a command may have hit one rank only, so it ends all ranks.
int run_with_mpi(int argc, char** argv, const slr::cli::sweep_commands& sweep) {
  int code = 0;
  {
    boost::mpi::environment environment(argc, argv, boost::mpi::threading::multiple, true);
    try {
      code = sweep.run();
    } catch (const slr::sched::stopped_by_error& e) {
      // Every worker was stopped and leaves the sweep normally: no MPI_Abort (and none of
      // mpirun's abort banner under the one-line message).
      std::cerr << "slr-sweep: fatal: " << e.what() << std::endl;
      slr::sched::barrier();
      code = 1;
    } catch (const std::exception& e) {
      std::cerr << "slr-sweep: fatal: " << e.what() << std::endl;
      if (slr::sched::world_size() > 1) slr::sched::abort_world(1);
      code = 1;
    }
  }
  // A solver thread abandoned at the wall-time cap may still run: leave without destructors.
  if (slr::sched::solver_threads_abandoned()) {
    std::fflush(nullptr);
    std::cout.flush();
    std::_Exit(code);
  }
  return code;
}
} // namespace

int main(int argc, char** argv) {
  // A sweep's stop signals count from its first instant: Slurm's SIGUSR1 (forwarded by mpirun)
  // may arrive while the ranks are still starting, and the default action would kill them (exit
  // 138 instead of 3, which ends the resubmission loop). Only `run` and `resume` take them over:
  // every other command stays interruptible by Ctrl-C.
  if (argc > 1 && (std::string_view(argv[1]) == slr::cli::run_command_name ||
                   std::string_view(argv[1]) == slr::cli::resume_command_name))
    slr::sched::install_stop_handlers();
  slr::sweep::describe_declared_parameters();
  CLI::App app{"slr-sweep: theory and simulations of single-location regression with attention"};
  app.require_subcommand(1);
  app.set_version_flag("--version", SLR_VERSION);
  const auto run_point = slr::cli::add_point_command(app);
  const auto sweep = slr::cli::add_sweep_commands(app);
  const auto run_plan = slr::cli::add_plan_command(app);
  const auto run_parameters = slr::cli::add_parameters_command(app);
  const auto run_outputs = slr::cli::add_outputs_command(app);
  const auto run_status = slr::cli::add_status_command(app);
  const auto run_recover = slr::cli::add_recover_command(app);
  const auto run_upgrade = slr::cli::add_upgrade_command(app);
  const auto run_query = slr::cli::add_query_command(app);
  const auto run_export = slr::cli::add_export_command(app);
  const auto run_plot = slr::cli::add_plot_command(app);
  const auto run_merge = slr::cli::add_merge_command(app);
  if (argc > 1 && argv[1][0] != '-') {
    // CLI11 would only say "A subcommand is required" for a mistyped one.
    std::string known;
    bool found = false;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      found = found || sub->get_name() == argv[1];
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found) {
      std::cerr << "slr-sweep: error: unknown subcommand '" << argv[1] << "' (expected one of: " << known << ")\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::Normal);
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion&) {
    std::cout << SLR_VERSION << "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "slr-sweep: error: " << e.what() << "\n";
    return 2;
  }
  if (sweep.selected()) return run_with_mpi(argc, argv, sweep);
  try {
    for (const auto* run : {&run_point, &run_plan, &run_parameters, &run_outputs, &run_status, &run_recover, &run_upgrade, &run_query, &run_export,
                            &run_plot, &run_merge})
      if (const int code = (*run)(); code >= 0) return code;
  } catch (const std::invalid_argument& e) {
    std::cerr << "slr-sweep: error: " << e.what() << "\n";
    return 2;
  } catch (const slr::archive::archive_locked_error& e) {
    std::cerr << "slr-sweep: error: " << e.what() << "\n";
    return 2;
  } catch (const slr::archive::journal_damaged_error& e) {
    std::cerr << "slr-sweep: error: " << e.what() << "\n";
    return 2;
  } catch (const slr::archive::archive_not_found_error& e) { // missing, foreign or damaged input
    std::cerr << "slr-sweep: error: " << e.what() << "\n";
    return 2;
  } catch (const slr::archive::input_refused_error& e) {
    std::cerr << "slr-sweep: error: " << e.what() << "\n";
    return 2;
  } catch (const slr::archive::archive_exists_error& e) { // an output that must not exist
    std::cerr << "slr-sweep: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "slr-sweep: fatal: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
