// `run` and `resume`. Rank 0 alone touches files (job file, archive); it validates everything
// before creating anything, then broadcasts the job text, which every rank expands into the same
// units (run_sweep verifies that). Errors seen on rank 0 during set-up are broadcast as an exit
// code, so all ranks leave together instead of hanging in a collective.
#include "slr/sweep/run.hpp"

#include <cmath>
#include <cstdio>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <sstream>
#include <string>

#include "slr/archive/archive_error.hpp"
#include "slr/archive/writer.hpp"
#include "slr/job/expansion.hpp"
#include "slr/job/job_file.hpp"
#include "slr/sched/node_memory.hpp"
#include "slr/sched/stop_signals.hpp"
#include "slr/sched/sweep.hpp"
#include "slr/sched/world.hpp"
#include "slr/sweep/archive_job.hpp"
#include "slr/sweep/archive_sink.hpp"

namespace slr::sweep {
namespace {

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::ostringstream read; // (istreambuf_iterator trips GCC 12's -Wnull-dereference inside libstdc++)
  read << in.rdbuf();
  std::string text = read.str();
  for (auto& c : text)
    if (c == '\0') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string signal_name(int signal_number) {
  switch (signal_number) {
  case SIGTERM: return "SIGTERM";
  case SIGINT: return "SIGINT";
  case SIGUSR1: return "SIGUSR1";
  default: return std::to_string(signal_number);
  }
}

// Runs `step` on rank 0 and gives every rank its exit code (0: fine); rank 0 prints the error.
int on_root(const std::function<void()>& step) {
  int code = 0;
  if (sched::world_rank() == 0) {
    try {
      step();
    } catch (const archive::archive_exists_error& e) {
      std::cerr << "slr-sweep: error: " << e.what() << "\n";
      code = 2;
    } catch (const archive::archive_not_found_error& e) {
      std::cerr << "slr-sweep: error: " << e.what() << "\n";
      code = 2;
    } catch (const archive::archive_locked_error& e) {
      std::cerr << "slr-sweep: error: " << e.what() << "\n";
      code = 2;
    } catch (const archive::journal_damaged_error& e) {
      std::cerr << "slr-sweep: error: " << e.what() << "\n";
      code = 2;
    } catch (const archive::input_refused_error& e) {
      std::cerr << "slr-sweep: error: " << e.what() << "\n";
      code = 2;
    } catch (const std::invalid_argument& e) { // job_error is one
      std::cerr << "slr-sweep: error: " << e.what() << "\n";
      code = 2;
    } catch (const std::exception& e) {
      std::cerr << "slr-sweep: fatal: " << e.what() << "\n";
      code = 1;
    }
  }
  sched::broadcast_from_root(code);
  return code;
}

// What opening the archive did besides replaying its journal, on stderr (rank 0).
void report_opened(const archive::writer::open_report& opened, const std::string& path) {
  if (opened.journal_from_snapshot)
    std::cerr << "slr-sweep: " << path << " had no journal: it was written from the .h5" << std::endl;
  if (opened.merged_points > 0)
    std::cerr << "slr-sweep: journaled again " << opened.merged_points
              << " row(s) that the .h5 held and the journal had lost" << std::endl;
  if (!opened.refused.empty()) {
    std::cerr << "slr-sweep: left out " << opened.refused.size()
              << " row(s) of the .h5 that are not points of the job (they are not journaled; a point they stood "
                 "for is computed again):\n";
    for (std::size_t i = 0; i < opened.refused.size() && i < 10; ++i)
      std::cerr << "  " << archive::point_id_text(opened.refused[i].point_id) << ": " << opened.refused[i].reason << "\n";
    if (opened.refused.size() > 10) std::cerr << "  … and " << opened.refused.size() - 10 << " more\n";
    std::cerr.flush();
  }
  if (!opened.merge_note.empty()) std::cerr << "slr-sweep: note: " << opened.merge_note << std::endl;
}

sched::sweep_options sweep_options_of(const sweep_arguments& args) {
  sched::sweep_options options;
  if (!(args.grace_s >= 0) || !std::isfinite(args.grace_s)) throw std::invalid_argument("--grace: must be finite and >= 0");
  options.grace_s = args.grace_s;
  if (!args.mem_per_node.empty()) {
    try {
      options.mem_per_node = sched::parse_memory_size(args.mem_per_node);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--mem-per-node: ") + e.what());
    }
  }
  if (!(args.point_timeout_s > 0)) throw std::invalid_argument("--point-timeout: must be > 0 seconds");
  options.point_timeout_s = args.point_timeout_s;
  options.threads_per_worker = args.threads_per_worker;
  if (!(args.progress_interval_s > 0)) throw std::invalid_argument("--progress-interval: must be > 0 seconds");
  options.progress_interval_s = args.progress_interval_s;
  return options;
}

// Everything after the set-up: expand the broadcast job on every rank, sweep, end the run.
int run_units(const std::string& job_text, const std::string& source, std::unique_ptr<archive::writer> writer,
              bool retry_failed, bool retry_not_converged, const sched::sweep_options& options,
              const std::string& archive_path,
              std::uint64_t max_points) {
  // Rank 0 parsed this text already, so this cannot fail unless ranks run different builds.
  const auto job = job::parse_job(job_text, source);
  const auto units = job::expand(job, max_points);
  const auto work = job::work_units(units);
  std::optional<archive_sink> sink;
  sched::done_predicate already_done;
  if (sched::world_rank() == 0) {
    sink.emplace(*writer, units);
    already_done = [&](std::size_t u, std::size_t p) {
      return !writer->needs_run(units[u].points[p].id, retry_failed, retry_not_converged);
    };
    const int workers = sched::worker_count(sched::world_size());
    std::size_t done = 0;
    for (std::size_t u = 0; u < units.size(); ++u)
      for (std::size_t p = 0; p < units[u].points.size(); ++p) done += already_done(u, p) ? 1 : 0;
    const std::string part =
        job.shard ? " (shard " + std::to_string(job.shard->index) + "/" + std::to_string(job.shard->count) + ")" : "";
    std::cerr << "slr-sweep: sweep '" << job.name << "'" << part << ": " << job::point_count(units) << " points in "
              << units.size() << " units (" << done << " already done), " << sched::world_size() << " rank(s), " << workers
              << " worker(s); archive " << archive_path << std::endl;
  }
  // An archive error on rank 0 (a full disk) ends the sweep on every rank through the same
  // collective calls as a normal end: rank 0 throws sched::stopped_by_error, which main reports
  // in one line and follows with the barrier the other ranks wait at (no MPI_Abort).
  std::string failure;
  if (sched::world_rank() == 0) {
    try {
      writer->begin_run({sched::world_size(), sched::processor_name(), command_line()});
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  int failed = failure.empty() ? 0 : 1;
  sched::broadcast_from_root(failed);
  if (failed != 0) {
    if (sched::world_rank() == 0) throw sched::stopped_by_error(failure);
    sched::barrier();
    return 1;
  }
  // A resumed or extended continuation chain starts each missing point from the stored record of
  // its nearest done neighbour in the chain.
  sched::stored_record stored;
  if (sched::world_rank() == 0)
    stored = [&](std::size_t u, std::size_t p) -> std::optional<grid::result_record> {
      const auto row = writer->find_row(units[u].points[p].id);
      if (!row) return std::nullopt;
      return archive::record_of(*row);
    };
  const auto outcome = sched::run_world_sweep(work, already_done, sink ? &*sink : nullptr, options, stored);
  if (sched::world_rank() == 0) {
    try {
      writer->end_run(outcome.exit_code == 0 ? "complete" : "signal " + signal_name(outcome.stop_signal));
    } catch (const std::exception& e) {
      throw sched::stopped_by_error(e.what());
    }
    if (outcome.failed_points + outcome.timeout_points > 0)
      std::cerr << "slr-sweep: " << outcome.failed_points << " failed and " << outcome.timeout_points
                << " timed-out points are recorded; `slr-sweep resume " << archive_path
                << " --retry-failed` runs them again" << std::endl;
    sink.reset();
    writer.reset(); // closed before the other ranks may exit (mpirun ends a job whose rank exits ≠ 0)
  }
  sched::barrier();
  return outcome.exit_code;
}

} // namespace

std::pair<std::uint32_t, std::uint32_t> parse_shard_option(const std::string& text) {
  unsigned long long index = 0, count = 0;
  char slash = 0, rest = 0;
  if (std::sscanf(text.c_str(), "%llu%c%llu%c", &index, &slash, &count, &rest) != 3 || slash != '/' ||
      text.find_first_not_of("0123456789/") != std::string::npos || count == 0 || index >= count ||
      count > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("--shard '" + text + "': expected i/n with 0 <= i < n (e.g. 0/4 … 3/4)");
  return {static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(count)};
}

int run(const sweep_arguments& args) {
  sched::install_stop_handlers();
  sched::sweep_options options;
  const int option_code = on_root([&] { (void)sweep_options_of(args); });
  if (option_code != 0) return option_code;
  options = sweep_options_of(args);
  std::unique_ptr<archive::writer> writer;
  std::string job_text, source;
  const int code = on_root([&] {
    auto job = job::load_job_file(args.job_path);
    const auto units = job::expand(job, args.max_points); // every point valid before anything is created
    if (!args.shard.empty()) {
      const auto [index, count] = parse_shard_option(args.shard);
      job = job::parse_job(job::shard_text(job.text, job::partition(units, count)[index]), args.job_path);
    }
    const auto parent = std::filesystem::path(args.archive_path).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent))
      throw std::invalid_argument("--output: directory " + parent.string() + " does not exist");
    writer = std::make_unique<archive::writer>(create_archive(args.archive_path, job, archive::writer::if_exists::fail));
    job_text = job.text;
    source = args.job_path;
  });
  if (code != 0) return code;
  sched::broadcast_from_root(job_text);
  sched::broadcast_from_root(source);
  return run_units(job_text, source, std::move(writer), false, false, options, args.archive_path, args.max_points);
}

int resume(const sweep_arguments& args) {
  sched::install_stop_handlers();
  const int option_code = on_root([&] { (void)sweep_options_of(args); });
  if (option_code != 0) return option_code;
  const auto options = sweep_options_of(args);
  std::unique_ptr<archive::writer> writer;
  std::string job_text, source;
  const int code = on_root([&] {
    std::optional<job::job_spec> extension;
    job::extension_check check;
    if (!args.extend_path.empty()) {
      // Decided before the archive is opened for writing: a refusal changes no file.
      extension = job::load_job_file(args.extend_path);
      const auto stored = archive::read_stored_job(args.archive_path);
      check = job::check_extension(
          job::expand(job::parse_job(stored.text, args.archive_path + ":job_text"), args.max_points),
          job::expand(*extension, args.max_points));
      if (!check.accepted)
        throw std::invalid_argument("--extend " + args.extend_path + ": refused: " + check.reason);
    }
    writer = std::make_unique<archive::writer>(archive::writer::open(args.archive_path, {}, job_row_check()));
    report_opened(writer->opened(), args.archive_path);
    if (extension) {
      (void)extend_job(*writer, *extension);
      std::cerr << "slr-sweep: extended the job of " << args.archive_path << " by " << check.added_points
                << " points (" << check.shared_points << " shared)" << std::endl;
    }
    job_text = writer->job_text();
    source = args.archive_path + ":job";
    (void)stored_job(*writer); // this build can parse the stored job
  });
  if (code != 0) return code;
  sched::broadcast_from_root(job_text);
  sched::broadcast_from_root(source);
  return run_units(job_text, source, std::move(writer), args.retry_failed, args.retry_not_converged, options,
                   args.archive_path, args.max_points);
}

} // namespace slr::sweep
