#include "slr/cli/status_command.hpp"

#include <chrono>
#include <cmath>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "slr/archive/archive_error.hpp"
#include "slr/archive/journal.hpp"
#include "slr/archive/reader.hpp"
#include "slr/job/expansion.hpp"
#include "slr/job/job_file.hpp"
#include "slr/methods/registry.hpp"
#include "slr/sched/progress.hpp"
#include "slr/sched/sweep.hpp"

namespace slr::cli {
namespace {

std::string local_time(double unix_seconds) {
  if (!std::isfinite(unix_seconds)) return "-";
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  localtime_r(&t, &tm);
  std::ostringstream out;
  out << std::put_time(&tm, "%Y-%m-%d %H:%M:%S");
  return out.str();
}

std::string duration_text(double s) {
  if (!std::isfinite(s) || s < 0) return "unknown";
  std::ostringstream out;
  const auto total = static_cast<long long>(std::llround(s));
  if (total >= 86400) out << total / 86400 << "d ";
  if (total >= 3600) out << (total % 86400) / 3600 << "h ";
  if (total >= 60) out << (total % 3600) / 60 << "m ";
  out << total % 60 << "s";
  return out.str();
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

nlohmann::ordered_json number_or_null(double x) {
  return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr);
}

// Everything `status` says, computed once and printed as text or JSON.
struct status_report {
  std::string archive, job_name, fingerprint, tool_version, git_revision;
  std::string shard; ///< "i/n" for the archive of one shard of its job (`run --shard`), else empty
  std::size_t snapshot_points = 0, newer_points = 0, total = 0;
  std::string total_note;
  std::map<std::string, std::size_t> by_status;
  std::vector<const archive::point_row*> not_ok;
  std::vector<archive::run_row> runs;
  archive::freshness fresh;
  bool running = false;
  double remaining_s = std::numeric_limits<double>::quiet_NaN(); ///< as the progress line computes it
  double workers = 1;
  std::map<std::string, double> calibration;                      ///< measured / estimated per method
  double rate = std::numeric_limits<double>::quiet_NaN();         ///< points/s of the current run
  double snapshot_unix = 0;

  std::size_t distinct_done = 0; ///< distinct points of the job in the snapshot or the journal
  std::string snapshot_problem;  ///< why the .h5 could not be read (the report then reads the journal alone)
  bool texts_unverified = false; ///< the .h5 predates text checksums
  std::size_t damaged_rows = 0;  ///< rows of the .h5 whose texts fail their checksum (left out)

  [[nodiscard]] std::size_t done() const { return distinct_done; }
};

status_report build_report(const std::string& path, std::vector<archive::point_row>& rows) {
  std::optional<archive::reader> reader;
  status_report r;
  r.archive = path;
  std::string job_text;
  try {
    reader.emplace(path);
  } catch (const archive::archive_not_found_error& e) {
    // A missing or damaged .h5 beside a readable journal: the journal is what the sweep has
    // done, so the report reads it (and says that the .h5 must be rebuilt).
    std::optional<archive::journal_view> view;
    try {
      view = archive::read_journal_view(path);
    } catch (const archive::archive_error&) {
    }
    if (!view) throw std::invalid_argument(path + ": " + e.what());
    r.snapshot_problem = e.what();
    r.job_name = view->job.name;
    r.fingerprint = view->job.fingerprint;
    r.tool_version = "?";
    r.git_revision = "journal only";
    r.snapshot_unix = std::numeric_limits<double>::quiet_NaN();
    r.fresh = view->fresh;
    r.newer_points = r.fresh.newer_points;
    r.running = r.fresh.writer_pid != 0;
    job_text = view->job.text;
    rows = std::move(view->points);
    r.runs = std::move(view->runs);
  }
  if (reader) {
    const auto& a = reader->attributes();
    r.job_name = a.job_name;
    r.fingerprint = a.job_fingerprint;
    r.tool_version = a.tool_version;
    r.git_revision = a.git_revision;
    r.snapshot_unix = a.snapshot_unix;
    r.texts_unverified = !a.checksummed;
    job_text = a.job_text;
    r.fresh = reader->check_freshness();
    r.snapshot_points = reader->point_count();
    r.newer_points = r.fresh.newer_points;
    r.running = r.fresh.writer_pid != 0;
    // Behind the snapshot, the journal's records are what the sweep has done: statuses, runs, the
    // rate and the calibration of the remaining time all read them.
    std::vector<archive::refused_row> damaged;
    if (r.newer_points > 0) {
      auto live = reader->live();
      rows = std::move(live.points);
      r.runs = std::move(live.runs);
    } else {
      rows = reader->points(&damaged);
      r.runs = reader->runs();
    }
    r.damaged_rows = damaged.size();
  }
  for (const auto& row : rows) {
    ++r.by_status[row.status];
    if (row.status != "ok") r.not_ok.push_back(&row);
  }

  // The remaining time as the running sweep's progress line computes it: the cost model of each
  // point still to run, calibrated per method by the wall times of the current run's points.
  std::unordered_map<std::uint64_t, const job::sweep_point*> planned;
  std::vector<job::sweep_unit> units;
  try {
    // The stored job passed its run's point limit.
    const auto stored = job::parse_job(job_text, path + ":job_text");
    if (stored.shard) r.shard = std::to_string(stored.shard->index) + "/" + std::to_string(stored.shard->count);
    units = job::expand(stored, std::numeric_limits<std::uint64_t>::max());
    for (const auto& u : units)
      for (const auto& p : u.points) planned.emplace(p.id, &p);
    r.total = planned.size();
  } catch (const std::exception& e) {
    r.total_note = std::string(" (total unknown: this build cannot expand the stored job: ") + e.what() + ")";
  }
  // Done = distinct points of the job, in the .h5 or journaled since: a point retried (a second
  // record of one id) or a row that is not a point of the job never counts twice.
  {
    std::unordered_set<std::uint64_t> ids;
    for (const auto& row : rows) ids.insert(row.point_id);
    if (!planned.empty()) std::erase_if(ids, [&](std::uint64_t id) { return !planned.contains(id); });
    r.distinct_done = ids.size();
  }
  if (r.total > 0) {
    sched::eta_model eta;
    std::unordered_map<std::uint64_t, const archive::point_row*> done;
    for (const auto& row : rows) done.emplace(row.point_id, &row);
    const std::uint32_t current = r.runs.empty() ? 0 : r.runs.back().run_index;
    const auto wall_column = [](const archive::point_row& row) {
      for (std::size_t i = 0; i < row.value_names.size() && i < row.values.size(); ++i)
        if (row.value_names[i] == "wall_s") return row.values[i];
      return std::numeric_limits<double>::quiet_NaN();
    };
    for (const auto& [id, point] : planned) {
      const double estimate = methods::find_method(point->point).cost_seconds(point->point);
      const auto it = done.find(id);
      if (it == done.end()) {
        eta.add_planned(point->point.method, estimate);
      } else if (!r.runs.empty() && it->second->run_index == current) {
        eta.add_planned(point->point.method, estimate);
        eta.add_finished(point->point.method, estimate, wall_column(*it->second));
      }
    }
    if (!r.runs.empty()) r.workers = sched::worker_count(std::max(1, r.runs.back().ranks));
    std::map<std::string, double> largest; // the largest unit still to run, per method
    for (const auto& u : units) {
      double remaining = 0;
      for (const auto& p : u.points)
        if (!done.contains(p.id)) remaining += methods::find_method(p.point).cost_seconds(p.point);
      auto& slot = largest[u.points.front().point.method];
      slot = std::max(slot, remaining);
    }
    r.remaining_s = r.total > r.done() ? eta.remaining_s(r.workers, largest) : 0.0;
    for (const auto& u : units)
      for (const auto& p : u.points) r.calibration.emplace(p.point.method, eta.factor(p.point.method));
  }
  if (r.running && !r.runs.empty()) {
    const auto& run = r.runs.back();
    const double elapsed = unix_now() - run.start_unix;
    r.rate = elapsed > 0 ? static_cast<double>(run.points_done) / elapsed : 0; // runs read the journal above
  }
  return r;
}

void print_text(const status_report& r) {
  std::cout << "archive " << r.archive << ": job " << r.job_name
            << (r.shard.empty() ? "" : " (shard " + r.shard + "; `slr-sweep merge` joins the shards)") << ", fingerprint "
            << r.fingerprint << ", written by slr-sweep " << r.tool_version << " (" << r.git_revision << ")\n";
  std::cout << "points: " << r.snapshot_points << " in the snapshot";
  if (r.newer_points > 0) std::cout << " + " << r.newer_points << " newer in the journal";
  if (r.total > 0) {
    std::cout << " = " << r.done() << " / " << r.total << " done (" << std::fixed << std::setprecision(1)
              << 100.0 * static_cast<double>(r.done()) / static_cast<double>(r.total) << "%), "
              << (r.total > r.done() ? r.total - r.done() : 0) << " missing";
    std::cout.unsetf(std::ios::fixed);
  }
  std::cout << r.total_note << "\n";
  std::cout << "status:";
  for (const auto& [name, count] : r.by_status) std::cout << " " << name << " " << count;
  if (r.by_status.empty()) std::cout << " (no points yet)";
  std::cout << "\n";
  for (std::size_t i = 0; i < r.not_ok.size() && i < 5; ++i)
  {
    std::cout << "  " << r.not_ok[i]->status << ": " << r.not_ok[i]->method;
    for (const char* name : {"nu", "alpha"})
      if (const auto* cell = r.not_ok[i]->parameter(name)) std::cout << " " << name << "=" << cell->to_text();
    std::cout << " repeat=" << r.not_ok[i]->repeat << ": " << r.not_ok[i]->message << "\n";
  }
  if (r.not_ok.size() > 5) std::cout << "  … and " << r.not_ok.size() - 5 << " more points that are not ok\n";
  std::cout << "runs: " << r.runs.size() << "\n";
  for (const auto& run : r.runs) {
    const double end = std::isfinite(run.end_unix) ? run.end_unix
                                                   : (run.exit_reason == "running" && r.running ? unix_now() : NAN);
    std::cout << "  #" << run.run_index << " " << local_time(run.start_unix) << " → " << local_time(run.end_unix)
              << ", " << run.ranks << " ranks on " << run.host << ", " << run.points_done << " points, "
              << (run.exit_reason == "running" && !r.running ? "interrupted (no writer holds the archive)"
                                                             : run.exit_reason);
    if (std::isfinite(end) && end > run.start_unix && run.points_done > 0)
      std::cout << ", " << std::setprecision(3) << static_cast<double>(run.points_done) / (end - run.start_unix)
                << " points/s";
    std::cout << "\n";
  }
  if (r.total > r.done()) {
    std::cout << (r.running ? "running" : "not running") << ": remaining " << duration_text(r.remaining_s) << " with "
              << r.workers << " worker(s) (cost model calibrated by this run's wall times:";
    for (const auto& [method, factor] : r.calibration)
      std::cout << " " << method << " ×" << std::setprecision(3) << factor;
    std::cout << ")";
    if (r.running && std::isfinite(r.rate)) std::cout << ", " << std::setprecision(3) << r.rate << " points/s";
    std::cout << "\n";
    if (!r.running) std::cout << "resume with `slr-sweep resume " << r.archive << "`\n";
  } else if (r.running) {
    std::cout << "running: a sweep (pid " << r.fresh.writer_pid << ") holds the archive's write lock\n";
  }
  const auto& f = r.fresh;
  if (!r.snapshot_problem.empty()) {
    std::cout << "snapshot: UNREADABLE: " << r.snapshot_problem << "\nthis report reads the journal alone; `slr-sweep "
              << (r.running ? "resume` (after the running sweep) or `recover " : "recover ") << r.archive
              << "` rebuilds the .h5 from it\n";
  } else {
    std::cout << "snapshot: written " << duration_text(f.snapshot_age_s) << " ago (" << local_time(r.snapshot_unix)
              << ")";
    if (!f.journal_present) std::cout << "; no journal next to it (read-only copy)";
    else if (f.newer_points > 0)
      std::cout << "; the journal holds " << f.newer_points
                << " newer points (the .h5 is rebuilt periodically and at the end of a run)";
    else if (f.missing_points == 0 && f.damaged_stretches == 0) std::cout << "; up to date with the journal";
    std::cout << "\n";
    if (r.damaged_rows > 0)
      std::cout << "snapshot: " << r.damaged_rows << " row(s) whose texts fail their checksum are left out; `slr-sweep "
                << "recover " << r.archive << "` takes them from the journal (`resume` recomputes those it lacks)\n";
    if (r.texts_unverified)
      std::cout << "snapshot: written before text checksums: its texts (messages, extra_json) are read unverified\n";
  }
  if (!f.journal_problem.empty()) std::cout << "journal: cannot be read: " << f.journal_problem << "\n";
  if (f.damaged_stretches > 0)
    std::cout << "journal: DAMAGED: " << f.damaged_bytes << " bytes in " << f.damaged_stretches
              << " stretch(es) are not intact records:\n"
              << f.damage_text << "\n`resume` refuses this journal; `slr-sweep recover --salvage " << r.archive
              << "` rebuilds it from every intact record (the damaged file is kept beside it)\n";
  if (f.missing_points > 0)
    std::cout << "journal: holds " << f.missing_points
              << " fewer point records than this snapshot was built from (truncated or damaged after it); "
                 "`slr-sweep recover "
              << r.archive << "` (or `resume`) journals the snapshot's rows again\n";
  if (f.torn_bytes > 0 && !r.running)
    std::cout << "journal: ends in an incomplete record of " << f.torn_bytes
              << " bytes (an interrupted append; it held no acknowledged point and is cut on resume)\n";
}

void print_json(const status_report& r) {
  nlohmann::ordered_json j;
  j["archive"] = r.archive;
  j["job"] = r.job_name;
  j["fingerprint"] = r.fingerprint;
  j["shard"] = r.shard.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.shard);
  j["points_total"] = r.total > 0 ? nlohmann::ordered_json(r.total) : nlohmann::ordered_json(nullptr);
  j["points_done"] = r.done();
  j["points_in_snapshot"] = r.snapshot_points;
  j["points_newer_in_journal"] = r.newer_points;
  j["by_status"] = r.by_status;
  j["running"] = r.running;
  j["writer_pid"] = r.fresh.writer_pid;
  j["remaining_s"] = number_or_null(r.remaining_s);
  j["workers"] = r.workers;
  j["calibration"] = r.calibration;
  j["rate_points_per_s"] = number_or_null(r.rate);
  j["runs"] = r.runs.size();
  j["snapshot_age_s"] = number_or_null(r.fresh.snapshot_age_s);
  j["snapshot_problem"] = r.snapshot_problem.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.snapshot_problem);
  j["snapshot_damaged_rows"] = r.damaged_rows;
  j["snapshot_texts_verified"] = !r.texts_unverified;
  j["journal"] = {{"present", r.fresh.journal_present},
                  {"damaged_stretches", r.fresh.damaged_stretches},
                  {"damaged_bytes", r.fresh.damaged_bytes},
                  {"torn_bytes", r.fresh.torn_bytes},
                  {"missing_points", r.fresh.missing_points}};
  std::cout << j.dump() << std::endl;
}

volatile std::sig_atomic_t watch_stop = 0;

} // namespace

std::function<int()> add_status_command(CLI::App& app) {
  struct arguments {
    std::string path;
    bool json = false;
    double watch_s = 0;
  };
  auto args = std::make_shared<arguments>();
  auto* cmd = app.add_subcommand("status", "Progress of a sweep from its archive: points done/total, failures, "
                                           "remaining time (read-only; safe while the sweep runs)");
  cmd->add_option("archive", args->path, "Archive (.h5)")->required();
  cmd->add_flag("--json", args->json, "One JSON object (one per line with --watch)");
  cmd->add_option("--watch", args->watch_s,
                  "Print again every this many seconds until the sweep is complete (an archive that does not exist "
                  "yet is waited for: the watch may start before the sweep)")
      ->check(CLI::PositiveNumber);
  return [args, cmd]() -> int {
    if (!*cmd) return -1;
    const auto wait = [&] {
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(args->watch_s);
      while (std::chrono::steady_clock::now() < until && !watch_stop)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    };
    if (args->watch_s > 0) {
      std::signal(SIGINT, [](int) { watch_stop = 1; });
      // A watch started beside `mpirun … run` may come before the sweep creates its archive.
      bool noted = false;
      while (!std::filesystem::exists(args->path) && !std::filesystem::exists(args->path + ".journal") && !watch_stop) {
        if (!noted) std::cerr << "slr-sweep status: waiting for " << args->path << " to be created\n";
        noted = true;
        wait();
      }
      if (watch_stop) return 0;
    }
    while (true) {
      std::vector<archive::point_row> rows;
      const auto report = build_report(args->path, rows);
      if (args->json) print_json(report);
      else print_text(report);
      std::cout.flush(); // each report reaches a pipe or a file as it is printed, not at exit
      const bool complete = report.total > 0 && report.done() >= report.total;
      if (!(args->watch_s > 0) || complete || watch_stop) return 0;
      wait();
      if (watch_stop) return 0;
      if (!args->json) std::cout << "\n";
    }
  };
}

} // namespace slr::cli
