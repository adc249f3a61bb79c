#pragma once
// The rows of the archive's two tables, as C++ values. A point_row is one finished point (one
// journal record, one row of /points); a run_row is one `run`/`resume` invocation (/runs).
// Archive column names: the fields below, then the result columns with dots replaced by
// underscores (order_parameters.m_kk → order_parameters_m_kk).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "slr/grid/point.hpp"
#include "slr/grid/result_record.hpp"

namespace slr::archive {

struct point_row {
  std::uint64_t point_id = 0;   ///< the point's sweep identity (unique within the job)
  std::uint32_t repeat = 0;
  std::uint64_t seed = 0;
  std::string method;
  std::string task;             ///< "spiked" / "max"
  double nu = 0;                ///< +inf allowed
  std::int64_t L = -1;          ///< fixed length, or −1 for a pmf
  std::string L_pmf;            ///< canonical length law text ("3" or "1:0.25,3:0.75")
  double delta = 0;
  std::string activation;
  double erf_offset = 0;        ///< NaN unless activation = erf
  double alpha = 0, r_k = 0, r_v = 0; ///< NaN for population-level methods
  std::string options;          ///< canonical "key=value;…" of the method options
  std::string status;           ///< grid::status_name
  std::string message;
  std::string extra_json;
  std::uint32_t run_index = 0;  ///< index into /runs of the run that finished it
  double completed_unix = 0;    ///< wall-clock time it was journaled (s since the epoch)
  std::vector<std::string> value_names; ///< archive names of `values` (normally all result columns)
  std::vector<double> values;
};

struct run_row {
  std::uint32_t run_index = 0;
  double start_unix = 0;
  double end_unix = 0;          ///< NaN while running or if the run died without end_run
  std::int32_t ranks = 0;
  std::string host;
  std::string command;          ///< the command line
  std::string exit_reason;      ///< "complete", "signal …", …; "interrupted" if it never ended
  std::uint64_t points_done = 0;///< points journaled by this run
};

/// Archive column name of a result column: dots → underscores.
[[nodiscard]] std::string archive_column_name(std::string_view result_column);

/// The row of a finished point: its parameters and options, its identity within its job
/// (`point_id`), repeat and seed beside the result record (values = all grid::result_columns, then
/// the method's own columns); completed_unix is now, run_index is left to the writer.
[[nodiscard]] point_row make_point_row(const grid::point& point, std::uint32_t repeat, std::uint64_t point_id,
                                       const grid::result_record& record);

/// Canonical "key=value;…" text of a point's options.
[[nodiscard]] std::string options_text(const grid::point& point);

} // namespace slr::archive
