#include "snapshot_merge.hpp"

#include <algorithm>
#include <cmath>

#include "slr/archive/archive_error.hpp"
#include "slr/archive/reader.hpp"

namespace slr::archive {

snapshot_rows snapshot_rows_missing_from(const std::filesystem::path& archive_path, const archive_model& model,
                                         const std::unordered_set<std::string>& fingerprints) {
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
    for (auto& row : snapshot.points()) {
      if (model.row_of().contains(row.point_id)) continue;
      out.entries.emplace_back(std::move(row));
      ++out.points;
    }
  } catch (const archive_error& e) {
    out.entries.clear();
    out.points = 0;
    out.note = std::string("the snapshot could not be read, so none of its rows were merged: ") + e.what();
  }
  return out;
}

} // namespace slr::archive
