#pragma once
// Private to src/archive: the in-memory state an archive's journal replays into (job, one row
// per point — the last record of a point wins —, runs), shared by the writer and recover.
// Rows whose value columns are the standard grid::result_columns are stored with empty
// value_names (saves ~1 kB per row); the snapshot writer reads empty names as the standard.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "slr/archive/journal.hpp"
#include "snapshot.hpp"

namespace slr::archive {

/// The archive names of the standard result columns (grid::result_columns), in their order: what
/// a row with empty value_names holds.
[[nodiscard]] const std::vector<std::string>& standard_value_names();

class archive_model {
public:
  /// Applies one journal entry (in journal order).
  void apply(journal_entry&& entry);

  [[nodiscard]] bool has_job() const noexcept { return !job_.text.empty() || !job_.fingerprint.empty(); }
  [[nodiscard]] const journal_job& job() const noexcept { return job_; }
  [[nodiscard]] const std::vector<point_row>& rows() const noexcept { return rows_; }
  [[nodiscard]] std::vector<run_row>& runs() noexcept { return runs_; }
  [[nodiscard]] const std::vector<run_row>& runs() const noexcept { return runs_; }
  [[nodiscard]] std::uint64_t point_records() const noexcept { return point_records_; }
  [[nodiscard]] const std::unordered_map<std::uint64_t, std::size_t>& row_of() const noexcept { return row_of_; }

  /// The snapshot of this state; `running_run` (if any) is shown as "running".
  [[nodiscard]] snapshot_content snapshot(std::uint64_t journal_bytes,
                                          std::optional<std::uint32_t> running_run = std::nullopt) const;

private:
  journal_job job_;
  std::vector<point_row> rows_;
  std::unordered_map<std::uint64_t, std::size_t> row_of_;
  std::vector<run_row> runs_;
  std::uint64_t point_records_ = 0;
};

} // namespace slr::archive
