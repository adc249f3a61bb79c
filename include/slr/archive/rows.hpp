#pragma once
// The rows of the archive's two tables, as C++ values. A point_row is one finished point (one
// journal record, one row of /points); a run_row is one `run`/`resume` invocation (/runs).
// Archive column names: the fields below with one column per parameter name, then the result
// columns with dots replaced by underscores (order_parameters.m_kk → order_parameters_m_kk).
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "slr/grid/parameter.hpp"
#include "slr/grid/result_record.hpp"

namespace slr::archive {

struct point_row {
  std::uint64_t point_id = 0;   ///< the point's sweep identity (unique within the job)
  std::uint32_t repeat = 0;
  std::uint64_t seed = 0;
  std::string method;
  /// The point's parameters as typed cells (model parameters, then method options), in the
  /// declaring order; a parameter the point's model or method does not have is absent.
  std::vector<grid::parameter_value> parameters;
  std::string status;           ///< grid::status_name
  std::string message;
  std::string extra_json;
  std::uint32_t run_index = 0;  ///< index into /runs of the run that finished it
  double completed_unix = 0;    ///< wall-clock time it was journaled (s since the epoch)
  std::vector<std::string> value_names; ///< archive names of `values` (normally all result columns)
  std::vector<double> values;

  /// A parameter cell by name, or nullptr.
  [[nodiscard]] const grid::parameter_value* parameter(std::string_view name) const;
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

/// Whether a row read back from a .h5 snapshot (not from the journal) is a point of the job whose
/// text is `job_text`: "" if it is, and then the row's parameters are replaced by the job's own
/// typed cells (a .h5 cannot tell an empty text from an absent one, nor keep every type);
/// otherwise the reason it is not (a bit flipped in a stored id, a row of another job). A row
/// refused is reported by id and never journaled. The archive knows no job files: the caller
/// that does supplies this (slr::sweep::job_row_check).
using row_check = std::function<std::string(const std::string& job_text, point_row& row)>;

/// A row of a .h5 that a row_check refused.
struct refused_row {
  std::uint64_t point_id = 0;
  std::string reason;
};

/// What a parameter column means, for the archive's self-description (CF-style attributes).
struct parameter_description {
  std::string long_name;
  std::string units; ///< "" for dimensionless
};
/// Descriptions recorded by every snapshot this process writes (the /points attribute
/// parameter_descriptions). The program sets them once from its declared parameters; the archive
/// itself knows no model or method. Not thread-safe: set before any writer exists.
void set_parameter_descriptions(std::map<std::string, parameter_description> descriptions);
[[nodiscard]] const std::map<std::string, parameter_description>& parameter_descriptions();

/// A point id as reports print it: 16 lowercase hex digits.
[[nodiscard]] std::string point_id_text(std::uint64_t id);

/// Archive column name of a result column: dots → underscores.
[[nodiscard]] std::string archive_column_name(std::string_view result_column);

/// The one mapping between a result's name in a row (and the journal) and its /points column,
/// used by the writer and, inverted, by the reader: a result named like a parameter (ERM's D, the
/// dimension simulated beside the D asked for) is stored as "<name>_result", and a result whose
/// name is already such a column name gets one more "_result", so the mapping is one-to-one for
/// any names. `is_parameter` says whether a name is a parameter column of the table.
[[nodiscard]] std::string result_column_of(const std::string& value_name,
                                           const std::function<bool(const std::string&)>& is_parameter);
/// The inverse of result_column_of.
[[nodiscard]] std::string value_name_of(const std::string& result_column,
                                        const std::function<bool(const std::string&)>& is_parameter);


/// The row of a finished point: its typed parameters (methods::point_parameters), its identity
/// within its job (`point_id`), repeat and seed beside the result record (values = all
/// grid::result_columns, then the method's own columns); completed_unix is now, run_index is left
/// to the writer.
[[nodiscard]] point_row make_point_row(std::string method, std::vector<grid::parameter_value> parameters,
                                       std::uint32_t repeat, std::uint64_t point_id, std::uint64_t seed,
                                       const grid::result_record& record);

/// The result record a row holds (the inverse of make_point_row): status, message, extra_json,
/// every grid::result_columns value by its archive name, the other values as method values.
/// Values the row lacks are NaN. Throws std::invalid_argument for an unknown status.
[[nodiscard]] grid::result_record record_of(const point_row& row);
/// The typed parameters of a row of the first archive schema, which stored the SLR parameters in
/// fixed columns (L = −1 for a pmf; erf_offset, alpha, r_k, r_v NaN where a point has none) and
/// the method options as "key=value;…" text (typed here by guess_typed_value).
[[nodiscard]] std::vector<grid::parameter_value>
schema1_parameters(const std::string& task, double nu, std::int64_t L, const std::string& L_pmf, double delta,
                   const std::string& activation, double erf_offset, double alpha, double r_k, double r_v,
                   const std::string& options);

} // namespace slr::archive
