#pragma once
// Archives with known contents for the query/export/plot tests, written through the archive's
// own writer API (slr::archive::writer) from hand-made rows.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "slr/archive/rows.hpp"
#include "slr/grid/point.hpp"
#include "slr/grid/result_record.hpp"

namespace slr::query::testing {

struct synthetic_row {
  std::string method = "fixed-point";
  std::string task = "spiked";
  std::string activation = "softmax";
  double nu = 1;
  double alpha = grid::not_set, r_k = grid::not_set, r_v = grid::not_set;
  unsigned repeat = 0;
  std::map<std::string, std::string> options;
  grid::status status = grid::status::ok;
  std::map<std::string, double> values; ///< result columns (dotted names)
};

/// A row with the given parameters (r_k = r_v = r), status ok and no values.
synthetic_row make_row(std::string method, std::string task, std::string activation, double nu,
                       double alpha = grid::not_set, double r = grid::not_set, unsigned repeat = 0);

/// The sweep identity of an unchained point (as job expansion computes it).
[[nodiscard]] /// The archive row of a point (parameters typed without the method registry, which the query
/// tests do not link: numbers of the options guessed from their text).
archive::point_row row_of(const grid::point& point, std::uint32_t repeat, std::uint64_t id,
                          const grid::result_record& record);
std::uint64_t point_id(const grid::point& point, std::uint32_t repeat);


/// Writes an archive holding exactly these rows (one run).
void write_archive(const std::filesystem::path& path, const std::vector<synthetic_row>& rows);

/// Rows for every figure (population, bayes, mismatched students, fixed-point, state-evolution,
/// erm with repeats and order parameters); values from simple closed formulas (see the .cpp).
std::vector<synthetic_row> figure_rows();

} // namespace slr::query::testing
