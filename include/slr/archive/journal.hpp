#pragma once
// The append-only journal results.h5.journal: the archive's source of truth. One record per
// event, each framed as
//   magic "SLRJ" (4) | type (u32) | payload length (u32) | reserved (u32) | checksum (u64) | payload
// (little endian; checksum = FNV-1a-64 of type, length and payload). A record is durable once
// append() + sync() returned. A torn or corrupt tail (SIGKILL/power cut mid-write) fails the
// length or checksum test; scanning stops there and reports the valid prefix, so nothing
// after a bad frame is trusted and every record before it is intact.
// Record types: header (first: journal format version), job (job text + fingerprint; a later
// job record replaces the earlier one after `--extend`), run_begin, run_end, point, and schema
// (the list of result-column names; a point record refers to one by hash, and journal_writer
// writes the schema record before the first point that uses it).
#include <cstdint>
#include <filesystem>
#include <unordered_set>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "slr/archive/rows.hpp"

namespace slr::archive {

/// Path of the journal of an archive: "<archive>.journal".
[[nodiscard]] std::filesystem::path journal_path(const std::filesystem::path& archive_path);

struct journal_job {
  std::string text;        ///< the job file text
  std::string fingerprint; ///< job::fingerprint of its expansion
  std::string source_name; ///< where it was read from
  std::string name;        ///< the sweep name
};
struct journal_run_begin {
  run_row run; ///< run_index, start_unix, ranks, host, command (end/exit/points_done unused)
};
struct journal_run_end {
  std::uint32_t run_index = 0;
  double end_unix = 0;
  std::string exit_reason;
};
using journal_entry = std::variant<journal_job, journal_run_begin, journal_run_end, point_row>;

/// Everything a journal holds, replayed in order.
struct journal_contents {
  std::vector<journal_entry> entries;
  std::uint64_t valid_bytes = 0;    ///< length of the intact prefix
  std::uint64_t ignored_bytes = 0;  ///< torn/corrupt tail after it (0 for a clean journal)
};

/// Reads a whole journal (read-only, no lock; safe while a writer appends: a record being
/// written counts as torn tail). Throws journal_error if the file is missing, unreadable or
/// does not start with a valid header record.
[[nodiscard]] journal_contents read_journal(const std::filesystem::path& path);

/// Append side. Owns the file descriptor and an exclusive open-file-description fcntl lock on it.
class journal_writer {
public:
  /// Creates a new journal (header + job record, fsync'd file and directory) atomically:
  /// written to "<path>.tmp" then renamed. Throws archive_exists_error if `path` exists.
  static journal_writer create(const std::filesystem::path& path, const journal_job& job);
  /// Opens an existing journal for appending: takes the lock (archive_locked_error if held),
  /// scans it, truncates a torn tail (reported in contents().ignored_bytes) and returns the
  /// replayed contents through `contents`.
  static journal_writer open(const std::filesystem::path& path, journal_contents& contents);

  journal_writer(journal_writer&&) noexcept;
  journal_writer& operator=(journal_writer&&) noexcept;
  journal_writer(const journal_writer&) = delete;
  journal_writer& operator=(const journal_writer&) = delete;
  ~journal_writer();

  /// Buffers a record in the OS (write(2)); not durable until sync(). Throws journal_error.
  void append(const journal_entry& entry);
  /// fdatasync: every appended record is durable when this returns. Throws journal_error.
  void sync();
  [[nodiscard]] std::uint64_t size_bytes() const noexcept { return size_; }

private:
  journal_writer(int fd, std::filesystem::path path, std::uint64_t size) noexcept;
  int fd_ = -1;
  std::filesystem::path path_;
  std::uint64_t size_ = 0;
  std::unordered_set<std::uint64_t> schemas_; ///< schema hashes already in the file
};

/// Encodes one entry as a framed record (a point record refers to its schema by hash only).
[[nodiscard]] std::string encode_record(const journal_entry& entry);

/// Whether a process holds the journal's write lock (an open-file-description fcntl lock,
/// queried with F_OFD_GETLK, which takes no lock): 0 = none (or no journal), otherwise nonzero
/// (the pid if the system reports it, else −1).
/// Locking is skipped (never held) when HDF5_USE_FILE_LOCKING is FALSE, for file systems
/// without fcntl locks; then the user must not run two writers on one archive.
[[nodiscard]] long journal_lock_holder(const std::filesystem::path& path);

} // namespace slr::archive
