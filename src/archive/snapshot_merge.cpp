#include "snapshot_merge.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "slr/archive/archive_error.hpp"
#include "slr/archive/reader.hpp"
#include "snapshot.hpp"

namespace slr::archive {

std::vector<point_row> checked_rows(std::vector<point_row> rows, const std::string& job_text, const row_check& check,
                                   std::vector<refused_row>& refused) {
  std::vector<point_row> accepted;
  accepted.reserve(rows.size());
  std::unordered_set<std::uint64_t> seen;
  for (auto& row : rows) {
    std::string reason = check ? check(job_text, row) : std::string();
    if (reason.empty() && !seen.insert(row.point_id).second) reason = "a second row of this point id";
    if (reason.empty()) accepted.push_back(std::move(row));
    else refused.push_back({row.point_id, std::move(reason)});
  }
  return accepted;
}

snapshot_rows snapshot_rows_missing_from(const std::filesystem::path& archive_path, const archive_model& model,
                                         const std::unordered_set<std::string>& fingerprints, const row_check& check) {
  snapshot_rows out;
  std::error_code error;
  if (!std::filesystem::is_regular_file(archive_path, error)) return out;
  try {
    const reader snapshot(archive_path);
    if (!fingerprints.contains(snapshot.attributes().job_fingerprint)) {
      out.note = archive_path.string() + " holds another job (fingerprint " + snapshot.attributes().job_fingerprint +
                 "); none of its rows were merged";
      return out;
    }
    auto runs = snapshot.runs();
    std::sort(runs.begin(), runs.end(), [](const run_row& a, const run_row& b) { return a.run_index < b.run_index; });
    // Runs are numbered by their order in the journal: lost runs are those past the model's.
    const auto known_runs = static_cast<std::uint32_t>(model.runs().size());
    const auto finished = [](const run_row& run) {
      return std::isfinite(run.end_unix) && run.exit_reason != "running" && run.exit_reason != "interrupted";
    };
    for (const auto& run : runs) {
      if (run.run_index < known_runs) {
        // A run whose end record was lost with the journal's tail.
        if (!finished(model.runs()[run.run_index]) && finished(run))
          out.entries.emplace_back(journal_run_end{run.run_index, run.end_unix, run.exit_reason});
        continue;
      }
      journal_run_begin begin{run};
      out.entries.emplace_back(begin);
      if (finished(run))
        out.entries.emplace_back(journal_run_end{run.run_index, run.end_unix, run.exit_reason});
    }
    std::vector<point_row> missing;
    std::vector<refused_row> damaged; // rows whose texts fail their checksum: only those the journal lacks matter
    for (auto& row : snapshot.points(&damaged))
      if (!model.row_of().contains(row.point_id)) missing.push_back(std::move(row));
    for (auto& row : damaged)
      if (!model.row_of().contains(row.point_id)) out.refused.push_back(std::move(row));
    for (auto& row : checked_rows(std::move(missing), model.job().text, check, out.refused)) {
      out.entries.emplace_back(std::move(row));
      ++out.points;
    }
  } catch (const archive_error& e) {
    out.entries.clear();
    out.points = 0;
    out.refused.clear();
    out.note = std::string("the snapshot could not be read, so none of its rows were merged: ") + e.what();
  }
  return out;
}

// An archive copied without its journal (e.g. moved to another cluster): the snapshot holds
// everything the journal would replay to, so write a journal from it. Only rows that `check`
// accepts as points of the stored job are journaled; the snapshot they make is built (in memory)
// before the journal is created, so a snapshot that cannot be written leaves no journal behind.
void journal_from_snapshot(const std::filesystem::path& path, const std::filesystem::path& journal_file,
                           const row_check& check, std::vector<refused_row>& refused) {
  const reader snapshot(path);
  const auto& a = snapshot.attributes();
  const journal_job job{a.job_text, a.job_fingerprint, "", a.job_name};
  auto runs = snapshot.runs();
  std::sort(runs.begin(), runs.end(), [](const run_row& x, const run_row& y) { return x.run_index < y.run_index; });
  auto points = checked_rows(snapshot.points(&refused), a.job_text, check, refused);
  std::stable_sort(points.begin(), points.end(),
                   [](const point_row& x, const point_row& y) { return x.run_index < y.run_index; });
  std::vector<journal_entry> entries;
  std::size_t next = 0;
  for (std::uint32_t r = 0; r < runs.size(); ++r) {
    journal_run_begin begin{runs[r]};
    begin.run.run_index = r;
    entries.emplace_back(std::move(begin));
    for (; next < points.size() && points[next].run_index == runs[r].run_index; ++next) {
      points[next].run_index = r;
      entries.emplace_back(points[next]);
    }
    if (std::isfinite(runs[r].end_unix)) entries.emplace_back(journal_run_end{r, runs[r].end_unix, runs[r].exit_reason});
  }
  for (; next < points.size(); ++next) entries.emplace_back(points[next]); // rows of unknown runs
  archive_model model;
  model.apply(journal_job{job});
  for (const auto& e : entries) model.apply(journal_entry{e});
  check_snapshot(path, model.snapshot(0));
  auto journal = journal_writer::create(journal_file, job);
  for (const auto& e : entries) journal.append(e);
  journal.sync();
}

} // namespace slr::archive
