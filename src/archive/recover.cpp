#include "slr/archive/recover.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iterator>
#include <optional>
#include <unordered_set>

#include "archive_model.hpp"
#include "slr/archive/archive_error.hpp"
#include "slr/archive/reader.hpp"
#include "snapshot.hpp"
#include "snapshot_merge.hpp"

namespace slr::archive {
namespace {

std::filesystem::path side_file_name(const std::filesystem::path& journal_file) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  auto side = journal_file;
  side += std::string(".damaged-") + stamp;
  for (int n = 1; std::filesystem::exists(side); ++n) {
    side = journal_file;
    side += std::string(".damaged-") + stamp + "-" + std::to_string(n);
  }
  return side;
}

} // namespace

recover_report recover(const std::filesystem::path& archive_path, recover_options options) {
  const auto start = std::chrono::steady_clock::now();
  const auto journal_file = journal_path(archive_path);
  recover_report report;
  if (!std::filesystem::exists(journal_file)) {
    if (!std::filesystem::exists(archive_path))
      throw archive_not_found_error("no archive at " + archive_path.string() + " and no journal at " +
                                    journal_file.string() + ": nothing to recover from");
    // A .h5 alone (copied without its journal): its journal is written from it.
    journal_from_snapshot(archive_path, journal_file, options.check, report.refused);
  }
  journal_contents contents;
  // Holding the writer's lock while rebuilding: refuses to run beside a live sweep.
  auto journal = journal_writer::open(journal_file, contents, options.salvage);
  report.ignored_bytes = contents.ignored_bytes;
  report.damage = contents.damage;
  report.intact_records = contents.entries.size();
  auto entries = std::move(contents.entries);

  const journal_job* stored_job = nullptr;
  for (const auto& e : entries)
    if (const auto* j = std::get_if<journal_job>(&e)) stored_job = j;
  if (options.job && stored_job != nullptr && stored_job->fingerprint != options.job->fingerprint)
    throw input_refused_error("--job: the journal's job record is intact and holds another job (fingerprint " +
                              stored_job->fingerprint + ", the file given " + options.job->fingerprint +
                              "); nothing was changed");
  if (options.salvage && (contents.damaged() || stored_job == nullptr)) {
    if (stored_job == nullptr) {
      std::optional<journal_job> job;
      std::string why_not_snapshot;
      try {
        // The job record was damaged: the .h5 stores the same job text and fingerprint.
        const reader snapshot(archive_path);
        const auto& a = snapshot.attributes();
        job = journal_job{a.job_text, a.job_fingerprint, "", a.job_name};
        report.job_from_snapshot = true;
      } catch (const archive_error& e) {
        why_not_snapshot = e.what();
      }
      if (!job && options.job) {
        // The job file the user gave: only if every intact point record is a point of it.
        std::uint64_t points = 0, foreign = 0;
        std::string first;
        for (const auto& e : entries)
          if (const auto* row = std::get_if<point_row>(&e)) {
            ++points;
            point_row copy = *row;
            if (auto reason = options.check ? options.check(options.job->text, copy) : std::string(); !reason.empty()) {
              if (foreign++ == 0) first = reason;
            }
          }
        if (foreign > 0)
          throw input_refused_error("--job: " + std::to_string(foreign) + " of the journal's " + std::to_string(points) +
                                    " intact point records are not points of that job (first: " + first +
                                    "); it is not the job of this archive, and nothing was changed");
        job = *options.job;
        report.job_from_option = true;
      }
      if (!job)
        throw journal_damaged_error(journal_file.string() + " has no intact job record and the .h5 cannot supply it (" +
                                    why_not_snapshot + "); `slr-sweep recover --salvage " + archive_path.string() +
                                    " --job JOB.toml` takes it from the job file (accepted only if every intact "
                                    "point is a point of it); the journal was left unchanged");
      std::vector<journal_entry> with_job;
      with_job.reserve(entries.size() + 1);
      with_job.emplace_back(std::move(*job));
      std::move(entries.begin(), entries.end(), std::back_inserter(with_job));
      entries.swap(with_job);
    }
    if (contents.damaged()) report.damaged_copy = side_file_name(journal_file);
    journal.rewrite(entries, report.damaged_copy);
  }

  archive_model model;
  std::unordered_set<std::string> fingerprints;
  for (auto& e : entries) {
    if (const auto* j = std::get_if<journal_job>(&e)) fingerprints.insert(j->fingerprint);
    model.apply(std::move(e));
  }
  if (!model.has_job())
    throw journal_damaged_error(journal_file.string() + " holds no intact job record; `slr-sweep recover --salvage " +
                                archive_path.string() + "` takes it from the .h5 (or from the job file: add --job JOB.toml)");

  // Rows only the old .h5 holds: the new snapshot is built with them first (with the journal
  // length it will reflect), then they are journaled.
  auto lost = snapshot_rows_missing_from(archive_path, model, fingerprints, options.check);
  report.merge_note = lost.note;
  for (auto& r : lost.refused) // the rows refused while the journal was written from the .h5 come again
    if (std::none_of(report.refused.begin(), report.refused.end(),
                     [&](const refused_row& x) { return x.point_id == r.point_id; }))
      report.refused.push_back(std::move(r));
  std::uint64_t journal_bytes = journal.size_bytes();
  for (const auto& e : lost.entries) journal_bytes += encode_record(e).size();
  for (const auto& e : lost.entries) model.apply(journal_entry{e});
  write_snapshot(archive_path, model.snapshot(journal_bytes));
  if (!lost.entries.empty()) {
    for (const auto& e : lost.entries) journal.append(e);
    journal.sync();
    report.merged_points = lost.points;
  }
  for (const auto& d : report.damage) {
    report.damaged_point_records += d.point_ids.size();
    report.unreadable_damaged_bytes += d.unaccounted_bytes;
    for (const auto id : d.point_ids)
      if (!model.row_of().contains(id)) report.lost_point_ids.push_back(id);
  }
  std::sort(report.lost_point_ids.begin(), report.lost_point_ids.end());
  report.lost_point_ids.erase(std::unique(report.lost_point_ids.begin(), report.lost_point_ids.end()),
                              report.lost_point_ids.end());

  report.journal_bytes = journal.size_bytes();
  report.points = model.rows().size();
  report.point_records = model.point_records();
  report.runs = model.runs().size();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

upgrade_report upgrade(const std::filesystem::path& archive_path, const parameter_retyper& retype,
                       const row_check& check) {
  const auto start = std::chrono::steady_clock::now();
  upgrade_report report;
  const auto journal_file = journal_path(archive_path);
  if (!std::filesystem::exists(archive_path) && !std::filesystem::exists(journal_file))
    throw archive_not_found_error("no archive at " + archive_path.string());
  std::int64_t snapshot_schema = 0;
  try {
    snapshot_schema = reader(archive_path).attributes().schema_version;
  } catch (const archive_error&) {
    // No readable .h5: recover() below rebuilds it from the journal.
  }
  if (std::filesystem::exists(journal_file)) {
    const auto contents = read_journal(journal_file);
    if (contents.first_schema_point_records == 0 && snapshot_schema == archive_schema_version) {
      report.already_current = true;
      report.points = reader(archive_path).point_count();
      return report;
    }
  }
  // Journals again what only the .h5 holds (all of it, for a .h5 without its journal) and cuts a
  // torn tail; refuses a damaged journal.
  recover_options recovering;
  recovering.check = check;
  (void)recover(archive_path, recovering);
  journal_contents contents;
  auto journal = journal_writer::open(journal_file, contents);
  report.rewritten_records = contents.first_schema_point_records;
  for (auto& entry : contents.entries)
    if (auto* row = std::get_if<point_row>(&entry)) row->parameters = retype(row->method, std::move(row->parameters));
  report.old_journal = journal_file;
  report.old_journal += ".schema1";
  for (int n = 1; std::filesystem::exists(report.old_journal); ++n) {
    report.old_journal = journal_file;
    report.old_journal += ".schema1-" + std::to_string(n);
  }
  journal.rewrite(contents.entries, report.old_journal);
  archive_model model;
  for (auto& e : contents.entries) model.apply(std::move(e));
  write_snapshot(archive_path, model.snapshot(journal.size_bytes()));
  report.points = model.rows().size();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

} // namespace slr::archive
