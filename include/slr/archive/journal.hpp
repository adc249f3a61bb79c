#pragma once
// The append-only journal results.h5.journal: the archive's source of truth. One record per
// event, each framed as (little endian)
//   v2: magic "SLR2" (4) | type (u32) | payload length (u32) | payload CRC-32C (u32) |
//       header CRC-32C of the preceding 16 bytes (u32) | payload
//   v1: magic "SLRJ" (4) | type (u32) | length (u32) | reserved (u32) | FNV-1a-64 (u64) | payload
// This release writes v2 frames (also when it appends to a journal begun by a v1 release) and
// reads both. A record is durable once append() + sync() returned.
// Reading tells three things apart:
//  - intact records, wherever they are: after a damaged stretch the reader resynchronises on the
//    next frame whose checksums hold, so one flipped bit costs one record, never the rest;
//  - a torn tail: a prefix of one record at the end of the file (a crash or a full disk mid-append
//    leaves the start of the record and nothing after it); it was never acknowledged and is cut
//    without a word when a writer opens the journal;
//  - damage: bytes that are neither an intact record nor such a prefix: between intact records,
//    or at the end (a complete frame whose checksum fails, zeroed or garbage bytes: bit rot, a
//    bad sector, an overwritten block, or a crash on a file system that exposes unwritten
//    blocks). They may have held acknowledged points, so nothing is cut: writers refuse the
//    journal (journal_damaged_error) until `recover --salvage`, which says what was lost.
// Record types: header (first: journal format version), job (job text + fingerprint; a later
// job record replaces the earlier one after `--extend`), run_begin, run_end and point. A point
// record is self-describing: its parameters as typed (name, kind, value) cells and the results it
// produced as (name, value) pairs, under the frame's CRC-32C. Journals of the first archive schema
// also hold fixed-column point records and column-schema records (result-column names a point
// record refers to by hash); both are still read, never written.
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

/// A stretch of a journal that is neither an intact record nor a torn tail.
struct journal_damage {
  std::uint64_t begin = 0, end = 0; ///< byte range [begin, end) in the journal
  std::string record_type;          ///< of the first record, if a frame header survived, else "unknown"
  bool at_end = false;              ///< the stretch runs to the end of the file
  /// Records in the stretch whose frame header survived (a lower bound of the records it held).
  std::uint64_t records = 0;
  /// Ids of the point records among them whose id bytes are inside the stretch (unverified: the
  /// damage may be in an id itself).
  std::vector<std::uint64_t> point_ids;
  /// Bytes of the stretch that no surviving frame header accounts for (records there cannot be
  /// counted).
  std::uint64_t unaccounted_bytes = 0;
};

/// Everything a journal holds, replayed in order.
struct journal_contents {
  std::vector<journal_entry> entries; ///< every intact record, in file order
  std::uint64_t valid_bytes = 0;      ///< end of the last intact record
  std::uint64_t ignored_bytes = 0;    ///< torn tail after it: a prefix of one record (0 for a clean journal)
  std::vector<journal_damage> damage; ///< damaged stretches (empty for an undamaged journal)
  std::uint64_t file_bytes = 0;       ///< journal size when it was read
  /// Point records in the first archive schema's fixed-column format (`slr-sweep upgrade`
  /// rewrites them as self-describing records).
  std::uint64_t first_schema_point_records = 0;
  [[nodiscard]] bool damaged() const noexcept { return !damage.empty(); }
  [[nodiscard]] std::uint64_t damaged_bytes() const noexcept;
};

/// One line per damaged stretch ("bytes 150000-150612 (612 bytes): 1 point record (point 0123…, id unverified)").
[[nodiscard]] std::string describe_damage(const journal_contents& contents, std::size_t max_lines = 8);

/// Reads a whole journal (read-only, no lock; safe while a writer appends: a record being
/// written counts as torn tail). Damage is reported in `damage`, never thrown. Throws
/// journal_error if the file is missing or unreadable, archive_not_found_error if it is empty or
/// not an slr-sweep journal (no intact record, or a foreign header).
[[nodiscard]] journal_contents read_journal(const std::filesystem::path& path);

/// Append side. Owns the file descriptor and an exclusive open-file-description fcntl lock on it.
class journal_writer {
public:
  /// Creates a new journal (header + job record, fsync'd file and directory) atomically:
  /// written to "<path>.tmp" then renamed. Throws archive_exists_error if `path` exists.
  static journal_writer create(const std::filesystem::path& path, const journal_job& job);
  /// Opens an existing journal for appending: takes the lock (archive_locked_error if held),
  /// scans it, truncates a torn tail (reported in contents.ignored_bytes) and returns the
  /// replayed contents through `contents`. A damaged journal is left untouched and refused
  /// with journal_damaged_error, unless `accept_damage` (then it is opened without truncating
  /// anything, for salvage()).
  static journal_writer open(const std::filesystem::path& path, journal_contents& contents,
                             bool accept_damage = false);

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

  /// Replaces the journal by a new one holding `entries` (header first, then the entries in
  /// order), atomically: written and fsync'd as "<path>.salvage.tmp" under this writer's lock,
  /// then renamed over `path`. The old journal stays reachable as `keep_old_as` (a hard link,
  /// made before the rename) unless that is empty. Throws journal_error.
  void rewrite(const std::vector<journal_entry>& entries, const std::filesystem::path& keep_old_as);

private:
  journal_writer(int fd, std::filesystem::path path, std::uint64_t size) noexcept;
  int fd_ = -1;
  std::filesystem::path path_;
  std::uint64_t size_ = 0;
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
