#pragma once
// `slr-sweep recover`: rebuilds an archive's .h5 snapshot from its journal (e.g. after a crash
// of the machine, or if the .h5 was deleted), truncating a torn journal tail, and journals
// again every row the old .h5 holds that the journal lost. With `salvage`, a damaged journal
// (journal.hpp) is rebuilt from every intact record; the damaged file is kept beside it.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "slr/archive/journal.hpp"

namespace slr::archive {

struct recover_options {
  bool salvage = false; ///< rebuild a damaged journal from its intact records instead of refusing
  /// Decides which rows of the .h5 are points of the job (writer::open); empty: every row.
  row_check check;
  /// With `salvage`: the job to use when the journal's job record is damaged and the .h5 cannot
  /// supply it. Accepted only if `check` accepts every intact point record of the journal as a
  /// point of it; with an intact job record it must have the same fingerprint.
  std::optional<journal_job> job;
};

struct recover_report {
  std::uint64_t points = 0;          ///< rows in the rebuilt /points (distinct point ids)
  std::uint64_t point_records = 0;   ///< point records in the journal (≥ points after retries)
  std::uint64_t runs = 0;
  std::uint64_t journal_bytes = 0;   ///< journal length afterwards
  std::uint64_t ignored_bytes = 0;   ///< torn tail removed
  std::uint64_t intact_records = 0;  ///< intact records the journal held (salvage keeps them all)
  std::vector<journal_damage> damage;   ///< damaged stretches found (salvage: dropped from the journal)
  std::filesystem::path damaged_copy;   ///< the damaged journal, kept byte for byte (salvage)
  std::uint64_t merged_points = 0;   ///< rows of the old .h5 that the journal lacked, journaled again
  std::string merge_note;            ///< why the old .h5 could not be merged from, if so
  bool job_from_snapshot = false;    ///< the job record was damaged and was taken from the .h5
  bool job_from_option = false;      ///< … and was taken from recover_options::job
  std::vector<refused_row> refused;  ///< rows of the .h5 that are not points of the job: left out
  /// Point records found in the damaged stretches (frame header intact), and the ids among them
  /// that neither an intact record nor the .h5 supplied: lost, to be recomputed.
  std::uint64_t damaged_point_records = 0;
  std::vector<std::uint64_t> lost_point_ids;
  /// Damaged bytes that no surviving record header accounts for (their records cannot be counted).
  std::uint64_t unreadable_damaged_bytes = 0;
  double seconds = 0;                ///< time to rebuild
};

/// Takes the write lock (archive_locked_error if a sweep is running on it), replays the
/// journal, truncates a torn tail, merges rows of the old .h5 the journal lacks (those `check`
/// accepts) and writes a new .h5 by temporary file + rename; the snapshot is built before any
/// record is appended, so a failure leaves the journal as it was. Throws archive_not_found_error if there is no journal,
/// journal_damaged_error for a damaged journal without `salvage` (nothing changed),
/// journal_error, hdf5_error.
recover_report recover(const std::filesystem::path& archive_path, recover_options options = {});

/// Re-types the parameters of a row read from a first-schema archive (whose options were text).
using parameter_retyper =
    std::function<std::vector<grid::parameter_value>(const std::string& method, std::vector<grid::parameter_value>)>;

struct upgrade_report {
  bool already_current = false;        ///< journal and .h5 were already of the current schema: nothing changed
  std::uint64_t rewritten_records = 0; ///< first-schema point records rewritten
  std::uint64_t points = 0;            ///< rows of the rebuilt /points
  std::filesystem::path old_journal;   ///< the journal as it was, kept byte for byte
  double seconds = 0;
};

/// `slr-sweep upgrade`: rewrites an archive of the first schema losslessly as the current one.
/// First recover() (so rows only the old .h5 holds are journaled again), then every point record
/// is rewritten self-describing with its parameters re-typed by `retype` (ids, seeds, results,
/// runs and the job unchanged) into a new journal that replaces the old one atomically (the old
/// one is kept as "<journal>.schema1"), and the .h5 is rebuilt. Throws like recover().
upgrade_report upgrade(const std::filesystem::path& archive_path, const parameter_retyper& retype,
                       const row_check& check = {});

} // namespace slr::archive
