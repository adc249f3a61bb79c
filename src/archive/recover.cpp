#include "slr/archive/recover.hpp"

#include <chrono>
#include <ctime>
#include <iterator>
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
  if (!std::filesystem::exists(journal_file))
    throw archive_not_found_error("no journal at " + journal_file.string() + ": nothing to recover from");
  journal_contents contents;
  // Holding the writer's lock while rebuilding: refuses to run beside a live sweep.
  auto journal = journal_writer::open(journal_file, contents, options.salvage);
  recover_report report;
  report.ignored_bytes = contents.ignored_bytes;
  report.damage = contents.damage;
  report.intact_records = contents.entries.size();
  auto entries = std::move(contents.entries);

  const auto has_job = [&] {
    for (const auto& e : entries)
      if (std::holds_alternative<journal_job>(e)) return true;
    return false;
  };
  if (options.salvage && (contents.damaged() || !has_job())) {
    if (!has_job()) {
      // The job record was damaged: the .h5 stores the same job text and fingerprint.
      try {
        const reader snapshot(archive_path);
        const auto& a = snapshot.attributes();
        std::vector<journal_entry> with_job;
        with_job.reserve(entries.size() + 1);
        with_job.emplace_back(journal_job{a.job_text, a.job_fingerprint, "", a.job_name});
        std::move(entries.begin(), entries.end(), std::back_inserter(with_job));
        entries.swap(with_job);
        report.job_from_snapshot = true;
      } catch (const archive_error& e) {
        throw journal_error(journal_file.string() + " has no intact job record and the .h5 cannot supply it (" +
                            e.what() + "); the journal was left unchanged");
      }
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
    throw journal_error(journal_file.string() + " holds no job record; `slr-sweep recover --salvage " +
                        archive_path.string() + "` takes it from the .h5");

  auto lost = snapshot_rows_missing_from(archive_path, model, fingerprints);
  report.merge_note = lost.note;
  if (!lost.entries.empty()) {
    for (const auto& e : lost.entries) journal.append(e);
    journal.sync();
    for (auto& e : lost.entries) model.apply(std::move(e));
    report.merged_points = lost.points;
  }
  for (const auto& d : report.damage)
    if (d.has_point_id && !model.row_of().contains(d.point_id)) report.lost_point_ids.push_back(d.point_id);

  report.journal_bytes = journal.size_bytes();
  write_snapshot(archive_path, model.snapshot(journal.size_bytes()));
  report.points = model.rows().size();
  report.point_records = model.point_records();
  report.runs = model.runs().size();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

upgrade_report upgrade(const std::filesystem::path& archive_path, const parameter_retyper& retype) {
  const auto start = std::chrono::steady_clock::now();
  upgrade_report report;
  const auto journal_file = journal_path(archive_path);
  std::int64_t snapshot_schema = 0;
  try {
    snapshot_schema = reader(archive_path).attributes().schema_version;
  } catch (const archive_error&) {
    // No readable .h5: recover() below rebuilds it from the journal.
  }
  {
    const auto contents = read_journal(journal_file);
    if (contents.first_schema_point_records == 0 && snapshot_schema == archive_schema_version) {
      report.already_current = true;
      report.points = reader(archive_path).point_count();
      return report;
    }
  }
  (void)recover(archive_path); // journals again what only the .h5 holds, cuts a torn tail
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
