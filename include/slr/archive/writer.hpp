#pragma once
// The write side of an archive, used by rank 0 of the sweep coordinator (no MPI here).
//
// Crash safety: the journal "<archive>.journal" is the source of truth; a point is acknowledged
// (record()/record_batch() returned) only once its record is fsync'd there. The HDF5 file
// "<archive>" is a snapshot rebuilt from the in-memory rows by writing "<archive>.tmp" and
// renaming it over "<archive>" (then fsync of the directory), periodically and at end_run(),
// so the .h5 on disk is always a complete, valid file that readers can open at any time;
// it lags the journal by at most the rebuild interval. `recover` (recover.hpp) rebuilds it.
//
// fsync cost: an fdatasync takes 2.5–6 ms on this machine's disk, so record() (one fsync per
// point) acknowledges ~175–400 points/s; record_batch() pays one fsync per batch (measured:
// 16 points ≈ 3.6k points/s, 256 points ≈ 16k points/s; tests/bench/archive_bench). A
// coordinator should pass everything that arrived since its last write as one batch.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "slr/archive/archive_error.hpp"
#include "slr/archive/journal.hpp"
#include "slr/archive/rows.hpp"
#include "slr/grid/result_record.hpp"

namespace slr::archive {

struct writer_options {
  std::size_t rebuild_every_points = 2000; ///< rebuild the .h5 after this many new points …
  double rebuild_every_seconds = 30;       ///< … or this long after the last rebuild (if points are new)
  /// … but never spend more than this fraction of wall time rebuilding (interval ≥ duration / fraction).
  double max_rebuild_fraction = 0.1;
};

/// Information about the invocation that begins a run (one row of /runs).
struct run_start {
  std::int32_t ranks = 1;
  std::string host;    ///< empty: gethostname()
  std::string command; ///< the command line, for provenance
};

/// Not thread-safe (nor is the serial HDF5 library): use one writer from one thread.
class writer {
public:
  enum class if_exists {
    fail,          ///< throw archive_exists_error if an archive (or its journal) is already there
    reuse_same_job ///< open it for resume if it holds the same job fingerprint; throw otherwise
  };

  /// Creates an archive for `job` at `path` (the .h5; the journal is path + ".journal"). The
  /// archive stores the job as given (text, fingerprint, source and name) and compares jobs by
  /// fingerprint only. Throws archive_exists_error (different job, or any archive with
  /// if_exists::fail), archive_locked_error, journal_error, hdf5_error. Never modifies an
  /// existing archive of a different job.
  static writer create(const std::filesystem::path& path, const journal_job& job,
                       if_exists policy = if_exists::fail, writer_options options = {});
  /// Opens an existing archive for resuming (takes the write lock, replays the journal,
  /// truncates a torn tail, journals again the rows of the .h5 that the journal lost, rebuilds
  /// the .h5 unless it is current). If only the .h5 exists (copied without its journal), a
  /// journal is first written from the snapshot. Rows taken from the .h5 are journaled only if
  /// `check` accepts them as points of the job (an empty check accepts every row); opened()
  /// reports what was taken and refused. The new snapshot is written before anything is
  /// appended, so a failure changes no record. Throws archive_not_found_error,
  /// archive_locked_error, journal_damaged_error (nothing changed), journal_error, hdf5_error.
  static writer open(const std::filesystem::path& path, writer_options options = {}, const row_check& check = {});

  /// What open() did besides replaying the journal.
  struct open_report {
    std::uint64_t torn_bytes = 0;        ///< an incomplete last record cut (never acknowledged)
    bool journal_from_snapshot = false;  ///< there was no journal: it was written from the .h5
    std::uint64_t merged_points = 0;     ///< rows only the .h5 held, journaled again
    std::vector<refused_row> refused;    ///< rows of the .h5 that are not points of the job: left out
    std::string merge_note;              ///< why the .h5 could not be merged from, if so
  };
  [[nodiscard]] const open_report& opened() const noexcept;

  writer(writer&&) noexcept;
  writer& operator=(writer&&) noexcept;
  ~writer(); ///< rebuilds the .h5 if points are newer than the snapshot (errors swallowed)

  /// The archive's path (the .h5), as given to create() or open().
  [[nodiscard]] const std::filesystem::path& path() const noexcept;
  /// The job stored in the archive (the source of truth for resume).
  [[nodiscard]] const std::string& job_text() const noexcept;
  [[nodiscard]] const std::string& job_fingerprint() const noexcept;

  /// Status of every point journaled so far (the last record wins for a point recorded twice).
  [[nodiscard]] const std::unordered_map<std::uint64_t, grid::status>& done() const noexcept;
  /// The row last journaled for a point (value_names filled in), or nullopt: what a resumed
  /// continuation chain warm-starts from.
  [[nodiscard]] std::optional<point_row> find_row(std::uint64_t point_id) const;
  /// Whether a resume must (re)run this point: missing, or with retry_failed, failed/timeout, or
  /// with retry_not_converged, not_converged (its new record then replaces the old one).
  [[nodiscard]] bool needs_run(std::uint64_t point_id, bool retry_failed, bool retry_not_converged = false) const;

  /// Appends a run_begin record (durable). Must precede record(); returns the run index.
  std::uint32_t begin_run(const run_start& start);
  /// Journals one finished point; durable (fsync'd) when it returns. May rebuild the .h5 (see
  /// options). The row's run_index is set to the current run.
  void record(const point_row& row);
  /// Journals several finished points with one fsync; all durable when it returns.
  void record_batch(std::span<const point_row> rows);
  /// Appends run_end (durable) and rebuilds the .h5. exit_reason: "complete", "signal SIGTERM", …
  void end_run(const std::string& exit_reason);

  /// Replaces the stored job by `extended` (journaled, durable). The caller has checked that
  /// the extended job keeps every point of the stored one (`resume --extend`).
  void extend_job(const journal_job& extended);

  /// Writes the .h5 snapshot now (temporary file + rename + directory fsync).
  void rebuild_now();
  /// Seconds spent in the last rebuild.
  [[nodiscard]] double last_rebuild_seconds() const noexcept;
  /// Why the last periodic rebuild failed (empty if it succeeded). Periodic rebuilds inside
  /// record()/begin_run() never throw — the points are already durable in the journal — and
  /// are retried at the next interval; rebuild_now() and end_run() do throw.
  [[nodiscard]] const std::string& last_rebuild_error() const noexcept;

private:
  struct state;
  explicit writer(std::unique_ptr<state> s) noexcept;
  std::unique_ptr<state> state_;
};

/// The job an archive holds (its journal's latest job record, else the .h5's), read-only: no
/// lock, no file changed. Throws archive_not_found_error, journal_error, hdf5_error.
[[nodiscard]] journal_job read_stored_job(const std::filesystem::path& path);

} // namespace slr::archive
