#pragma once
// Private to src/archive: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of
// journal frames. Its own code, not the physics hash of the point identities: a checksum must
// detect every burst of ≤ 32 flipped bits, which a 64-bit FNV hash does not guarantee.
#include <cstdint>
#include <string_view>

namespace slr::archive {

/// CRC-32C of `bytes`, continuing from `crc` (0 for a fresh checksum). crc32c("123456789") = 0xE3069283.
[[nodiscard]] std::uint32_t crc32c(std::string_view bytes, std::uint32_t crc = 0) noexcept;

} // namespace slr::archive
