#pragma once
// Shared by `query`, `export` and `plot`: the archive argument and the row filters (--where,
// --status), read through slr::archive::reader (read-only; safe while a sweep is running).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "slr/query/table.hpp"

namespace slr::cli {

struct archive_input {
  std::string path;                  ///< the archive (.h5)
  std::string where;                 ///< --where
  std::vector<std::string> statuses; ///< --status

  /// Registers the positional ARCHIVE and --where/--status on `command`.
  void add_to(CLI::App& command);
  /// Reads the points and applies the filters. Throws std::invalid_argument naming the archive
  /// (missing / not an archive) or the filter argument. Prints a one-line note on stderr when a
  /// sweep is writing the archive and the snapshot lags its journal.
  [[nodiscard]] query::table load_filtered() const;
};

/// Splits a comma-separated CLI list (CLI11 gives the raw text).
[[nodiscard]] std::vector<std::string> list_argument(const std::string& text);

} // namespace slr::cli
