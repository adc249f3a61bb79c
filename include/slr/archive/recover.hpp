#pragma once
// `slr-sweep recover`: rebuilds an archive's .h5 snapshot from its journal (e.g. after a crash
// of the machine, or if the .h5 was deleted), truncating a torn journal tail.
#include <cstdint>
#include <filesystem>

namespace slr::archive {

struct recover_report {
  std::uint64_t points = 0;          ///< rows in the rebuilt /points (distinct point ids)
  std::uint64_t point_records = 0;   ///< point records in the journal (≥ points after retries)
  std::uint64_t runs = 0;
  std::uint64_t journal_bytes = 0;   ///< intact journal length
  std::uint64_t ignored_bytes = 0;   ///< torn tail removed
  double seconds = 0;                ///< time to rebuild
};

/// Takes the write lock (archive_locked_error if a sweep is running on it), replays the
/// journal, truncates a torn tail and writes a new .h5 by temporary file + rename.
/// Throws archive_not_found_error if there is no journal, journal_error, hdf5_error.
recover_report recover(const std::filesystem::path& archive_path);

} // namespace slr::archive
