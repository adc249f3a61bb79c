#pragma once
// Private to src/archive: writes the HDF5 snapshot of an archive (tables /points and /runs plus
// root attributes) to "<archive>.tmp", fsyncs it and renames it over "<archive>".
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "slr/archive/rows.hpp"

namespace slr::archive {

/// 2: typed parameter columns (named by the /points attribute parameter_columns), no options
/// column. 1: fixed SLR parameter columns and an options text column (still read).
inline constexpr long long archive_schema_version = 2;
inline constexpr const char* archive_format_name = "slr-sweep archive";

/// The uint32 column of /points and /runs that holds row_text_crc32c of the row's texts (the
/// variable-length ones live in HDF5's global heap, which neither the format nor the tables'
/// Fletcher-32 covers). Archives written before it have no such column: their texts are read
/// unverified.
inline constexpr const char* text_crc_column = "text_crc32c";
/// The root attribute that holds attributes_crc32c(file).
inline constexpr const char* attributes_crc_attribute = "attributes_crc32c";

/// One text cell of a row into its CRC-32C: the column name, a NUL, the text, a NUL (cells are
/// added in the table's column order).
[[nodiscard]] std::uint32_t add_text_cell(std::uint32_t crc, std::string_view column, std::string_view text);

namespace h5 {
class handle;
}
/// CRC-32C of the attributes of the root group, then of /points (h5::attributes_crc32c), leaving
/// out attributes_crc_attribute itself.
[[nodiscard]] std::uint32_t attributes_crc32c(const h5::handle& file);

struct snapshot_content {
  std::string job_text, job_fingerprint, job_name;
  std::vector<const point_row*> rows; ///< in table order; empty value_names = the standard result columns
  std::vector<run_row> runs;
  std::uint64_t journal_bytes = 0;    ///< journal length the snapshot reflects
  std::uint64_t journal_points = 0;   ///< point records in that prefix
};

/// Sorts rows into the archive's table order (method, then the parameters in their declared order,
/// repeat, point_id): deterministic whatever the completion order.
void sort_rows(std::vector<const point_row*>& rows);

/// Writes the snapshot atomically (temporary file, fsync, rename, directory fsync).
/// Throws hdf5_error or archive_error.
void write_snapshot(const std::filesystem::path& archive_path, const snapshot_content& content);

/// Builds the snapshot in memory and discards it: throws what write_snapshot would throw for this
/// content, before a caller changes any file.
void check_snapshot(const std::filesystem::path& archive_path, const snapshot_content& content);

/// The union of value column names over rows: grid::result_columns order first, then others.
[[nodiscard]] std::vector<std::string> value_column_union(const std::vector<const point_row*>& rows);

} // namespace slr::archive
