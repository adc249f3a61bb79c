#pragma once
// The points of an archive as a column table, the input and output of every query operation.
// Columns are the archive's /points columns (rows.hpp: parameters, status, result columns with
// dots → underscores) except extra_json; point_id and seed are exact 64-bit integers, every other
// numeric column is a double (NaN = not set / not produced), text columns are strings.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "slr/archive/rows.hpp"

namespace slr::query {

enum class column_kind {
  number,  ///< double (NaN allowed, ±inf allowed)
  integer, ///< exact unsigned 64-bit (point_id, seed)
  text
};

struct column {
  std::string name;
  column_kind kind = column_kind::number;
  bool is_result = false;              ///< a solver output (result column), not a parameter or bookkeeping
  bool is_parameter = false;           ///< part of a point's identity (method, a declared parameter, repeat)
  std::vector<double> numbers;         ///< kind number
  std::vector<std::uint64_t> integers; ///< kind integer
  std::vector<std::string> texts;      ///< kind text

  /// An empty column.
  [[nodiscard]] static column make(std::string name, column_kind kind, bool is_result = false);
  [[nodiscard]] std::size_t size() const noexcept;
  /// Shortest round-trip text of a cell ("nan", "inf" for non-finite numbers).
  [[nodiscard]] std::string cell_text(std::size_t row) const;
  /// Whether two cells of this column hold the same value (NaN equals NaN).
  [[nodiscard]] bool same(std::size_t a, std::size_t b) const;
  /// Strict weak order of cells (numbers ascending, NaN last; text lexicographic).
  [[nodiscard]] bool less(std::size_t a, std::size_t b) const;
};

class table {
public:
  std::vector<column> columns;

  [[nodiscard]] std::size_t rows() const noexcept { return columns.empty() ? 0 : columns.front().size(); }
  /// nullptr if there is no such column.
  [[nodiscard]] const column* find(std::string_view name) const noexcept;
  /// Throws std::invalid_argument "<argument>: unknown column '<name>' (known: …)".
  [[nodiscard]] const column& at(std::string_view name, std::string_view argument) const;
  [[nodiscard]] std::vector<std::string> names() const;
  /// The parameter columns (the identity of a point apart from its seed), in archive order:
  /// method, the declared parameters of the archive's points, repeat.
  [[nodiscard]] std::vector<std::string> parameter_names() const;
  /// Whether some row has a length pmf rather than a fixed L (L is NaN there, L_pmf holds the law).
  [[nodiscard]] bool has_length_pmf() const;
  /// A table of the given rows (indices into this table, in that order).
  [[nodiscard]] table take(const std::vector<std::size_t>& rows) const;
  /// A table of the given columns (names must exist; throws like at()).
  [[nodiscard]] table select(const std::vector<std::string>& names, std::string_view argument) const;
};

/// Builds the table from archive rows: bookkeeping, then one column per parameter name (the union
/// over the rows, in first-seen order; text if any cell is text, else numbers; NaN / "" where a
/// row has no such parameter), then the value columns (the union of the rows' value_names).
[[nodiscard]] table from_rows(const std::vector<archive::point_row>& rows);
/// Rows of several tables one after the other, tagged by a first text column `tag_column`
/// holding each part's label. Columns are the union (in order of first appearance); a cell a part
/// does not have is NaN (numbers), 0 (integers) or empty (text). Throws std::invalid_argument if
/// one name has two kinds.
[[nodiscard]] table concatenate(const std::vector<std::pair<std::string, table>>& parts, const std::string& tag_column);

/// Opens an archive read-only (archive::reader) and reads all its points. Throws
/// archive::archive_not_found_error / hdf5_error.
[[nodiscard]] table load_archive(const std::filesystem::path& path);

} // namespace slr::query
