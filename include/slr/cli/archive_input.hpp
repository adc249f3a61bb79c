#pragma once
// Shared by `query`, `export` and `plot`: the archive argument and the row filters (--where,
// --status), read through slr::archive::reader (read-only; safe while a sweep is running).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "slr/query/table.hpp"

namespace slr::cli {

struct archive_input {
  std::string path;                  ///< the archive (.h5); with several, the first
  std::vector<std::string> paths;    ///< every archive given (when registered with several = true)
  std::string where;                 ///< --where
  std::vector<std::string> statuses; ///< --status

  /// Registers the positional ARCHIVE (or ARCHIVE... with `several`) and --where/--status.
  void add_to(CLI::App& command, bool several = false);
  /// Reads the points (of every archive, rows tagged by a first column `archive` when there are
  /// several) and applies the filters. Throws std::invalid_argument naming the archive
  /// (missing / not an archive) or the filter argument. Prints a one-line note on stderr when a
  /// sweep is writing the archive and the snapshot lags its journal.
  [[nodiscard]] query::table load_filtered() const;
};

/// Splits a comma-separated CLI list (CLI11 gives the raw text).
[[nodiscard]] std::vector<std::string> list_argument(const std::string& text);

} // namespace slr::cli
