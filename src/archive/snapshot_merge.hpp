#pragma once
// Private to src/archive: rows the .h5 snapshot holds that its journal lost (the journal was
// truncated, or damaged and salvaged, after the snapshot was written). The journal is the source
// of truth only for what it holds; a row is never dropped because the journal forgot it.
#include <filesystem>
#include <string>
#include <unordered_set>
#include <vector>

#include "archive_model.hpp"
#include "slr/archive/journal.hpp"

namespace slr::archive {

struct snapshot_rows {
  std::vector<journal_entry> entries; ///< run_begin/run_end of lost runs, then the lost point rows
  std::uint64_t points = 0;           ///< point rows among them
  std::string note;                   ///< why nothing could be merged (unreadable .h5, another job), if so
  std::vector<refused_row> refused;   ///< rows of the .h5 that `check` says are not points of the job
};

/// The journal entries that bring `model` up to the .h5 at `archive_path`: runs the model lacks
/// (by index), and rows whose point id it lacks and that `check` (if given) accepts as points of
/// the model's job. Only from a snapshot of one of the jobs the journal has held
/// (`fingerprints`); a missing or unreadable .h5 gives nothing. Never throws for a bad .h5 (the
/// note says what was wrong).
[[nodiscard]] snapshot_rows snapshot_rows_missing_from(const std::filesystem::path& archive_path,
                                                       const archive_model& model,
                                                       const std::unordered_set<std::string>& fingerprints,
                                                       const row_check& check);

/// Rows of a .h5 that `check` accepts (parameters replaced by the job's cells); the others go
/// to `refused`. Also refuses a second row of one point id. An empty check accepts every row.
[[nodiscard]] std::vector<point_row> checked_rows(std::vector<point_row> rows, const std::string& job_text,
                                                  const row_check& check, std::vector<refused_row>& refused);

/// Writes the journal of an archive that has only its .h5 (copied without its journal, e.g. to
/// another cluster): the job, the runs and the rows `check` accepts (the others go to `refused`).
/// The snapshot those make is built in memory first, so a snapshot that could not be written
/// leaves no journal behind. Throws archive_not_found_error for an unreadable .h5.
void journal_from_snapshot(const std::filesystem::path& path, const std::filesystem::path& journal_file,
                           const row_check& check, std::vector<refused_row>& refused);

} // namespace slr::archive
