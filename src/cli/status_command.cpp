#include "slr/cli/status_command.hpp"

#include <chrono>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <memory>
#include <sstream>
#include <unordered_set>

#include "slr/archive/archive_error.hpp"
#include "slr/archive/reader.hpp"
#include "slr/job/expansion.hpp"
#include "slr/job/job_file.hpp"

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

} // namespace

std::function<int()> add_status_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("status", "Progress of a sweep from its archive: points done/total, failures, "
                                           "rate and ETA (read-only; safe while the sweep runs)");
  cmd->add_option("archive", *path, "Archive (.h5)")->required();
  return [path, cmd]() -> int {
    if (!*cmd) return -1;
    std::optional<archive::reader> reader;
    try {
      reader.emplace(*path);
    } catch (const archive::archive_not_found_error& e) {
      throw std::invalid_argument(*path + ": " + e.what());
    }
    const auto& a = reader->attributes();
    const auto rows = reader->points();
    const auto runs = reader->runs();
    const auto fresh = reader->check_freshness();

    std::cout << "archive " << *path << ": job " << a.job_name << ", fingerprint " << a.job_fingerprint
              << ", written by slr-sweep " << a.tool_version << " (" << a.git_revision << ")\n";

    std::size_t total = 0;
    std::string total_note;
    std::unordered_set<std::uint64_t> planned;
    try {
      // The stored job passed its run's point limit.
      const auto units = job::expand(job::parse_job(a.job_text, *path + ":job_text"),
                                     std::numeric_limits<std::uint64_t>::max());
      for (const auto& u : units)
        for (const auto& p : u.points) planned.insert(p.id);
      total = planned.size();
    } catch (const std::exception& e) {
      total_note = std::string(" (total unknown: this build cannot expand the stored job: ") + e.what() + ")";
    }
    std::map<std::string, std::size_t> by_status;
    std::vector<const archive::point_row*> failures;
    for (const auto& r : rows) {
      ++by_status[r.status];
      if (r.status != "ok") failures.push_back(&r);
    }
    const std::size_t done = rows.size() + fresh.newer_points;
    std::cout << "points: " << rows.size() << " in the snapshot";
    if (fresh.newer_points > 0) std::cout << " + " << fresh.newer_points << " newer in the journal";
    if (total > 0) {
      std::cout << " = " << done << " / " << total << " done (" << std::fixed << std::setprecision(1)
                << 100.0 * static_cast<double>(done) / static_cast<double>(total) << "%), "
                << (total > done ? total - done : 0) << " missing";
      std::cout.unsetf(std::ios::fixed);
    }
    std::cout << total_note << "\n";
    std::cout << "status:";
    for (const auto& [name, count] : by_status) std::cout << " " << name << " " << count;
    if (by_status.empty()) std::cout << " (no points yet)";
    std::cout << "\n";
    for (std::size_t i = 0; i < failures.size() && i < 5; ++i)
      std::cout << "  " << failures[i]->status << ": " << failures[i]->method << " nu=" << failures[i]->nu
                << " alpha=" << failures[i]->alpha << " repeat=" << failures[i]->repeat << ": " << failures[i]->message
                << "\n";
    if (failures.size() > 5) std::cout << "  … and " << failures.size() - 5 << " more points that are not ok\n";

    const bool running = fresh.writer_pid != 0;
    std::cout << "runs: " << runs.size() << "\n";
    for (const auto& r : runs) {
      const double end = std::isfinite(r.end_unix) ? r.end_unix : (r.exit_reason == "running" && running ? unix_now()
                                                                                                          : NAN);
      std::cout << "  #" << r.run_index << " " << local_time(r.start_unix) << " → " << local_time(r.end_unix) << ", "
                << r.ranks << " ranks on " << r.host << ", " << r.points_done << " points, "
                << (r.exit_reason == "running" && !running ? "interrupted (no writer holds the archive)"
                                                           : r.exit_reason);
      if (std::isfinite(end) && end > r.start_unix && r.points_done > 0)
        std::cout << ", " << std::setprecision(3) << static_cast<double>(r.points_done) / (end - r.start_unix)
                  << " points/s";
      std::cout << "\n";
    }
    if (running && !runs.empty() && total > 0 && total > done) {
      const auto& r = runs.back();
      const double elapsed = unix_now() - r.start_unix;
      const double rate = elapsed > 0 ? static_cast<double>(r.points_done + fresh.newer_points) / elapsed : 0;
      const double remaining = total > done ? static_cast<double>(total - done) : 0.0;
      std::cout << "running: " << std::setprecision(3) << rate << " points/s, ETA "
                << (rate > 0 ? duration_text(remaining / rate) : std::string("unknown")) << "\n";
    } else if (running) {
      std::cout << "running: a sweep (pid " << fresh.writer_pid << ") holds the archive's write lock\n";
    } else if (total > done) {
      std::cout << "not running: resume with `slr-sweep resume " << *path << "`\n";
    }
    std::cout << "snapshot: written " << duration_text(fresh.snapshot_age_s) << " ago ("
              << local_time(a.snapshot_unix) << ")";
    if (!fresh.journal_present) std::cout << "; no journal next to it (read-only copy)";
    else if (fresh.newer_points > 0)
      std::cout << "; the journal holds " << fresh.newer_points
                << " newer points (the .h5 is rebuilt periodically and at the end of a run)";
    else if (fresh.missing_points == 0 && fresh.damaged_stretches == 0) std::cout << "; up to date with the journal";
    std::cout << "\n";
    if (!fresh.journal_problem.empty()) std::cout << "journal: cannot be read: " << fresh.journal_problem << "\n";
    if (fresh.damaged_stretches > 0)
      std::cout << "journal: DAMAGED: " << fresh.damaged_bytes << " bytes in " << fresh.damaged_stretches
                << " stretch(es) are not intact records:\n"
                << fresh.damage_text << "\n`resume` refuses this journal; `slr-sweep recover --salvage " << *path
                << "` rebuilds it from every intact record (the damaged file is kept beside it)\n";
    if (fresh.missing_points > 0)
      std::cout << "journal: holds " << fresh.missing_points
                << " fewer point records than this snapshot was built from (truncated or damaged after it); "
                   "`slr-sweep recover "
                << *path << "` (or `resume`) journals the snapshot's rows again\n";
    if (fresh.torn_bytes > 0 && !running)
      std::cout << "journal: ends in an incomplete record of " << fresh.torn_bytes
                << " bytes (an interrupted append; it held no acknowledged point and is cut on resume)\n";
    return 0;
  };
}

} // namespace slr::cli
