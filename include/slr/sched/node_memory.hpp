#pragma once
// Memory of this node, for the per-node budget. No MPI here.
#include <cstddef>
#include <string_view>

namespace slr::sched {

/// MemAvailable from /proc/meminfo in bytes (falls back to free physical pages via sysconf).
[[nodiscard]] std::size_t available_memory_bytes();

/// Parses "4096", "512M", "64G", "1.5T" (binary units K/M/G/T, optional trailing B/iB) into
/// bytes; throws std::invalid_argument naming the text for anything else or a value ≤ 0.
[[nodiscard]] std::size_t parse_memory_size(std::string_view text);

} // namespace slr::sched
