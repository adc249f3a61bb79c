#pragma once
// Private to src/archive: journal helpers used by the reader and the writer.
#include <cstdint>
#include <filesystem>
#include <string>

namespace slr::archive {

/// What a read-only look at a journal found (it never locks or changes the file).
struct journal_summary {
  bool readable = false;              ///< false: missing or not a journal (`error` says why)
  std::string error;
  std::uint64_t point_records = 0;    ///< intact point records
  std::uint64_t damaged_stretches = 0;
  std::uint64_t damaged_bytes = 0;
  std::uint64_t torn_bytes = 0;       ///< incomplete last record (a crash mid-append, or a writer appending now)
  std::string damage_text;            ///< describe_damage() of the first stretches
};

[[nodiscard]] journal_summary summarize_journal(const std::filesystem::path& path);

} // namespace slr::archive
