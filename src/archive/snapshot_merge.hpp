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
};

/// The journal entries that bring `model` up to the .h5 at `archive_path`: runs the model lacks
/// (by index), and rows whose point id it lacks. Only from a snapshot of one of the jobs the
/// journal has held (`fingerprints`); a missing or unreadable .h5 gives nothing. Never throws
/// for a bad .h5 (the note says what was wrong).
[[nodiscard]] snapshot_rows snapshot_rows_missing_from(const std::filesystem::path& archive_path,
                                                       const archive_model& model,
                                                       const std::unordered_set<std::string>& fingerprints);

} // namespace slr::archive
