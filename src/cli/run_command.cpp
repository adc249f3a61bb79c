// `run` and `resume`. Rank 0 alone touches files (job file, archive); it validates everything
// before creating anything, then broadcasts the job text, which every rank expands into the same
// units (run_sweep verifies that). Errors seen on rank 0 during set-up are broadcast as an exit
// code, so all ranks leave together instead of hanging in a collective.
#include "slr/cli/run_command.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "slr/archive/writer.hpp"
#include "slr/job/expansion.hpp"
#include "slr/job/job_file.hpp"
#include "slr/sched/node_memory.hpp"
#include "slr/sched/progress.hpp"
#include "slr/sched/stop_signals.hpp"
#include "slr/sched/sweep.hpp"
#include "slr/sched/world.hpp"

namespace slr::cli {
namespace {
struct sweep_arguments {
  std::string job_path;
  std::string archive_path;
  std::string extend_path;
  bool retry_failed = false;
  double grace_s = 20;
  std::string mem_per_node;
  double point_timeout_s = std::numeric_limits<double>::infinity();
  unsigned threads_per_worker = 1;
  double progress_interval_s = 30;
  std::uint64_t max_points = job::default_max_points;
};

// The archive as the coordinator's result sink: rows are buffered and journaled in one fsync'd
// batch per flush (the coordinator flushes at least every 0.25 s and whenever it is idle).
class archive_sink final : public sched::result_sink {
public:
  archive_sink(archive::writer& writer, const std::vector<job::sweep_unit>& units) : writer_(writer), units_(units) {}
  void record(std::size_t unit, std::size_t position, const grid::point&, const grid::result_record& record) override {
    pending_.push_back({unit, position});
    records_.push_back(record);
  }
  void flush() override {
    if (pending_.empty()) return;
    std::vector<archive::finished_point> batch;
    batch.reserve(pending_.size());
    for (std::size_t i = 0; i < pending_.size(); ++i)
      batch.push_back({&units_[pending_[i].first].points[pending_[i].second], &records_[i]});
    writer_.record_batch(batch);
    pending_.clear();
    records_.clear();
  }
  void checkpoint() noexcept override {
    try {
      flush();
      writer_.rebuild_now();
    } catch (const std::exception& e) {
      // Everything is in the journal; the .h5 is rebuilt at the end or by `recover`.
      std::cerr << "slr-sweep: warning: could not update the .h5 on the stop signal: " << e.what() << std::endl;
    }
  }

private:
  archive::writer& writer_;
  const std::vector<job::sweep_unit>& units_;
  std::vector<std::pair<std::size_t, std::size_t>> pending_;
  std::vector<grid::result_record> records_;
};

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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

void add_run_options(CLI::App* cmd, sweep_arguments& args) {
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

// Everything after the set-up: expand the broadcast job on every rank, sweep, end the run.
int sweep(const std::string& job_text, const std::string& source, std::unique_ptr<archive::writer> writer,
          bool retry_failed, const sched::sweep_options& options, const std::string& archive_path,
          std::uint64_t max_points) {
  // Rank 0 parsed this text already, so this cannot fail unless ranks run different builds.
  const auto job = job::parse_job(job_text, source);
  const auto units = job::expand(job, max_points);
  const auto work = job::work_units(units);
  std::optional<archive_sink> sink;
  sched::done_predicate already_done;
  if (sched::world_rank() == 0) {
    sink.emplace(*writer, units);
    already_done = [&](std::size_t u, std::size_t p) { return !writer->needs_run(units[u].points[p].id, retry_failed); };
    const int workers = sched::worker_count(sched::world_size());
    std::size_t done = 0;
    for (std::size_t u = 0; u < units.size(); ++u)
      for (std::size_t p = 0; p < units[u].points.size(); ++p) done += already_done(u, p) ? 1 : 0;
    std::cerr << "slr-sweep: sweep '" << job.name << "': " << job::point_count(units) << " points in " << units.size()
              << " units (" << done << " already done), " << sched::world_size() << " rank(s), " << workers
              << " worker(s); archive " << archive_path << std::endl;
    writer->begin_run({sched::world_size(), sched::processor_name(), command_line()});
  }
  const auto outcome = sched::run_world_sweep(work, already_done, sink ? &*sink : nullptr, options);
  if (sched::world_rank() == 0) {
    writer->end_run(outcome.exit_code == 0 ? "complete" : "signal " + signal_name(outcome.stop_signal));
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

int run_command(const sweep_arguments& args) {
  sched::install_stop_handlers();
  sched::sweep_options options;
  const int option_code = on_root([&] { (void)sweep_options_of(args); });
  if (option_code != 0) return option_code;
  options = sweep_options_of(args);
  std::unique_ptr<archive::writer> writer;
  std::string job_text, source;
  const int code = on_root([&] {
    auto job = job::load_job_file(args.job_path);
    (void)job::expand(job, args.max_points); // every point valid before anything is created
    const auto parent = std::filesystem::path(args.archive_path).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent))
      throw std::invalid_argument("--output: directory " + parent.string() + " does not exist");
    writer = std::make_unique<archive::writer>(
        archive::writer::create(args.archive_path, job, archive::writer::if_exists::fail));
    job_text = job.text;
    source = args.job_path;
  });
  if (code != 0) return code;
  sched::broadcast_from_root(job_text);
  sched::broadcast_from_root(source);
  return sweep(job_text, source, std::move(writer), false, options, args.archive_path, args.max_points);
}

int resume_command(const sweep_arguments& args) {
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
    writer = std::make_unique<archive::writer>(archive::writer::open(args.archive_path));
    if (extension) {
      writer->extend_job(*extension);
      std::cerr << "slr-sweep: extended the job of " << args.archive_path << " by " << check.added_points
                << " points (" << check.shared_points << " shared)" << std::endl;
    }
    job_text = writer->job_text();
    source = args.archive_path + ":job";
    (void)writer->job(); // this build can parse the stored job
  });
  if (code != 0) return code;
  sched::broadcast_from_root(job_text);
  sched::broadcast_from_root(source);
  return sweep(job_text, source, std::move(writer), args.retry_failed, options, args.archive_path, args.max_points);
}
} // namespace

sweep_commands add_sweep_commands(CLI::App& app) {
  auto args = std::make_shared<sweep_arguments>();
  auto* run = app.add_subcommand("run", "Run a sweep over MPI (mpirun -n N slr-sweep run job.toml -o results.h5)");
  run->add_option("job", args->job_path, "Job file (TOML, see jobs/README.md)")->required();
  run->add_option("-o,--output", args->archive_path, "Archive to create (HDF5; must not exist)")->required();
  add_run_options(run, *args);
  auto* resume = app.add_subcommand("resume", "Run the missing points of an interrupted sweep (job read from the archive)");
  resume->add_option("archive", args->archive_path, "Archive of the sweep")->required();
  resume->add_flag("--retry-failed", args->retry_failed, "Also run points recorded as failed or timeout again");
  resume->add_option("--extend", args->extend_path,
                     "Replace the job by this extended job first (refused unless every existing point is unchanged)");
  add_run_options(resume, *args);
  return {[run, resume] { return run->parsed() || resume->parsed(); },
          [run, args] { return run->parsed() ? run_command(*args) : resume_command(*args); }};
}

} // namespace slr::cli
