#pragma once
// The read side of an archive, for `status`, `query`, `export`. Opens only the .h5 snapshot,
// read-only (honours HDF5_USE_FILE_LOCKING), never the journal for writing: it cannot block or
// corrupt a running sweep, whose writer replaces the snapshot by rename (an open reader keeps
// the old, complete file). The snapshot lags the journal by at most the writer's rebuild
// interval; freshness() says by how much.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "slr/archive/archive_error.hpp"
#include "slr/archive/journal.hpp"
#include "slr/archive/rows.hpp"

namespace slr::archive {

/// Root attributes of an archive.
struct archive_attributes {
  std::int64_t schema_version = 0;
  std::string tool_version, git_revision, compiler;
  std::map<std::string, std::string> library_versions; ///< "hdf5" → "1.10.8", "boost" → …
  std::string job_text, job_fingerprint, job_name;
  double snapshot_unix = 0;           ///< when this snapshot was written
  std::uint64_t journal_bytes = 0;    ///< journal length it was built from
  std::uint64_t journal_points = 0;   ///< point records it was built from (incl. duplicates)
  /// JSON object {parameter: {"long_name": …, "units": …}} of the parameter columns (schema ≥ 2;
  /// "{}" or empty when the writing program declared none).
  std::string parameter_descriptions;
  /// The snapshot carries checksums of its attributes and of each row's texts (verified on
  /// reading); false for archives written before them, whose texts are read unverified.
  bool checksummed = false;
};

/// How current the snapshot is relative to the journal (read-only inspection).
struct freshness {
  double snapshot_age_s = 0;          ///< now − snapshot_unix
  bool journal_present = false;
  std::uint64_t journal_bytes = 0;    ///< current journal size (0 if absent)
  std::uint64_t newer_points = 0;     ///< intact point records in the journal after the snapshot
  /// Point records the snapshot was built from that the journal no longer holds (it was
  /// truncated or damaged after the snapshot); `recover`/`resume` merge those rows back.
  std::uint64_t missing_points = 0;
  std::uint64_t damaged_stretches = 0; ///< damaged stretches in the journal (see journal.hpp)
  std::uint64_t damaged_bytes = 0;
  std::uint64_t torn_bytes = 0;       ///< an incomplete last record (a crash, or a writer appending now)
  std::string damage_text;            ///< where the damage is, one line per stretch
  std::string journal_problem;        ///< why the journal could not be read (empty if it could)
  long writer_pid = 0;                ///< pid holding the write lock (a sweep running), 0 if none
};

class reader {
public:
  /// Opens an archive's .h5 snapshot. The file is first read whole in a child process (its
  /// memory and time capped): a file whose damage would crash HDF5 or exhaust memory is refused
  /// with archive_not_found_error ("… is a damaged HDF5 file (reading it crashed HDF5 (SIGSEGV))"),
  /// as is a missing, foreign or otherwise damaged file; a file checked once is not read again by
  /// this process. Throws archive_error for an archive of a newer schema.
  explicit reader(const std::filesystem::path& path);
  reader(reader&&) noexcept;
  reader& operator=(reader&&) noexcept;
  ~reader();

  [[nodiscard]] const archive_attributes& attributes() const noexcept;
  /// All rows of /points (value_names = the float64 result columns present in the file). Rows of
  /// a first-schema archive get typed parameters from its fixed columns and options text. Throws
  /// archive_not_found_error for a damaged table (a chunk failing its Fletcher-32 checksum, a
  /// column layout outside the row). A row whose texts fail their checksum is left out and, when
  /// `refused` is given, listed there with the reason.
  [[nodiscard]] std::vector<point_row> points(std::vector<refused_row>* refused = nullptr) const;
  /// The archive as the sweep knows it now: the journal's intact records replayed over the
  /// snapshot — every point record (the last record of a point wins, as in `recover`) plus the
  /// snapshot's rows of points the journal no longer holds, in snapshot order; and the runs of
  /// the journal (the last one "running" while a writer holds the journal's lock). The snapshot
  /// alone when there is no journal or it cannot be read. Reads the journal without a lock (safe
  /// beside a running sweep: a record being written is a torn tail and left out). Throws like
  /// points().
  struct live_state {
    std::vector<point_row> points;
    std::vector<run_row> runs;
  };
  [[nodiscard]] live_state live() const;
  /// All rows of /runs; throws like points().
  [[nodiscard]] std::vector<run_row> runs() const;
  /// Number of rows of /points without reading them.
  [[nodiscard]] std::uint64_t point_count() const;
  /// Compares the snapshot with the journal next to it (reads the journal, takes no lock).
  [[nodiscard]] freshness check_freshness() const;

private:
  enum class open_mode { checked, trusted }; ///< trusted: inside the checking child
  reader(const std::filesystem::path& path, open_mode mode);
  void open_file();
  void read_attributes();
  [[nodiscard]] std::vector<point_row> read_points(std::vector<refused_row>* refused) const;
  [[nodiscard]] std::vector<run_row> read_runs() const;
  struct state;
  std::unique_ptr<state> state_;
};

/// The archive as its journal alone holds it, for when the .h5 is missing or cannot be read
/// safely: the job, every point (the last record of a point wins, in table order), the runs (the
/// last one "running" while a writer holds the journal's lock) and the journal's state in
/// `fresh` (newer_points = every point record; no snapshot age). Reads without a lock, safe
/// beside a running sweep. Throws archive_not_found_error when there is no journal,
/// journal_error when it cannot be read or holds no intact job record.
struct journal_view {
  journal_job job;
  std::vector<point_row> points;
  std::vector<run_row> runs;
  freshness fresh;
};
[[nodiscard]] journal_view read_journal_view(const std::filesystem::path& archive_path);

} // namespace slr::archive
