#pragma once
// Private to src/archive: journal helpers used by the reader and the writer.
#include <cstdint>
#include <filesystem>

namespace slr::archive {

/// Intact point records in a journal (0 if it is missing or unreadable); reads, never locks.
[[nodiscard]] std::uint64_t count_point_records(const std::filesystem::path& path);

} // namespace slr::archive
