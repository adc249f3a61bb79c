#pragma once
// The solver interface: every method ("bayes", "population", "fixed-point", …) is described
// once here, with its options, its solve function, a cost model and a memory estimate.
// The CLI's `point` command, job-file validation and the MPI workers all go through this
// registry, so adding a method is one source file (src/methods/<name>.cpp) plus one line
// in all_methods(). Nothing here uses MPI.
#include <cstddef>
#include <functional>
#include <map>
#include <stdexcept>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "slr/grid/parameter.hpp"
#include "slr/grid/point.hpp"
#include "slr/grid/result_record.hpp"

namespace slr::methods {

/// A method option is a declared parameter (slr/grid/parameter.hpp).
using option_spec = grid::parameter_spec;

/// A model family: its parameters, declared once. Single-location regression ("slr") carries its
/// parameters in grid::point's typed fields (problem, alpha, r_k, r_v); every other model's
/// parameters are held as canonical text in grid::point::options beside the method's own.
struct model_descriptor {
  std::string name;
  std::string summary;
  std::vector<grid::parameter_spec> parameters;
  /// The declaration of one of its parameters, or nullptr.
  [[nodiscard]] const grid::parameter_spec* find(std::string_view parameter) const noexcept;
};

/// The model of single-location regression: task, nu, L, delta, activation, erf_offset (erf only),
/// alpha (finite-α methods), r_k and r_v (methods with an ERM penalty).
[[nodiscard]] const model_descriptor& slr_model();
/// Every model ("slr" first, then "tied-attention").
[[nodiscard]] const std::vector<model_descriptor>& all_models();
/// Throws std::invalid_argument naming the known models.
[[nodiscard]] const model_descriptor& find_model(std::string_view name);

/// How a solve runs (never part of a point's identity: results do not depend on it).
struct run_context {
  unsigned threads = 1;                                            ///< 0 = all hardware threads
  double wall_time_limit_s = std::numeric_limits<double>::infinity(); ///< per point; solvers stop with status timeout
  /// Result of the previous point of a continuation chain (α-continuation), or null. Iterative
  /// solvers that support warm starts initialise from its order_parameters.* and V.* columns.
  const grid::result_record* warm_start = nullptr;
};

/// One output of a method: a key of its `slr-sweep point` JSON and a column of the archive. Result
/// columns keep their dotted names (order_parameters.m_kk); keys of the JSON extras are declared
/// as the archive's readers flatten them: nested objects joined with '.', arrays whole (one output).
struct output_spec {
  std::string name;
  std::string meaning; ///< what the quantity is, its normalisation (one or two sentences)
  std::string unit{};  ///< "" where dimensionless
  /// Empty: every solve that finishes emits it. Otherwise when it is emitted, e.g. "optimizer =
  /// gradient-flow": the outputs test runs need not produce it.
  std::string condition{};
};

struct method_descriptor {
  std::string model = "slr"; ///< the model family whose points it solves
  std::string name;          ///< unique within its model
  std::string summary;
  /// Shown in help texts and in the lists of known methods of error messages; false for methods
  /// that exist for the tests (they still run when named).
  bool listed = true;
  bool finite_alpha = false; ///< needs alpha > 0 and r_k, r_v ≥ 0
  /// With finite_alpha: false for methods without an ERM penalty (the Bayes-optimal state
  /// evolution), whose points take α but no r_k, r_v (they are cleared to keep identities canonical).
  bool uses_regularisation = true;
  std::vector<option_spec> options;
  /// Every key its records can carry beyond the point's parameters and status / message: the
  /// result columns it sets, its method columns and its extra JSON keys, in output order. The
  /// registry appends what solve_point adds to every record (wall_s).
  std::vector<output_spec> outputs;
  std::function<grid::result_record(const grid::point&, const run_context&)> solve;
  /// Estimated single-thread wall time in seconds (for scheduling most-expensive-first).
  std::function<double(const grid::point&)> cost_seconds;
  /// Estimated peak memory in bytes (for the per-node memory budget).
  std::function<std::size_t(const grid::point&)> memory_bytes;
  /// Parameters of its model that the method does not take (e.g. the token dimension d for a
  /// theory method); single-location regression decides by finite_alpha / uses_regularisation.
  std::vector<std::string> unused_model_parameters;
  /// Optional: checks option combinations of a completed point (before any work is scheduled);
  /// throws std::invalid_argument naming the option and the reason.
  std::function<void(const grid::point&)> validate;
};

[[nodiscard]] const std::vector<method_descriptor>& all_methods();
/// The declaration of an output of a method, or nullptr.
[[nodiscard]] const output_spec* find_output(const method_descriptor& method, std::string_view name) noexcept;
/// A method of single-location regression; throws std::invalid_argument naming the known methods.
[[nodiscard]] const method_descriptor& find_method(std::string_view name);
/// A method of a model; throws std::invalid_argument naming the model's methods.
[[nodiscard]] const method_descriptor& find_method(std::string_view model, std::string_view name);
/// The method of a point (its model and method name).
[[nodiscard]] const method_descriptor& find_method(const grid::point& point);
/// The registry name of a point's model ("slr" for grid::point::model == "").
[[nodiscard]] std::string_view model_of(const grid::point& point) noexcept;
/// Adds a method to the registry (tests and embedders); throws std::invalid_argument if the name
/// is taken or one of its options has a model parameter's name. Not thread-safe: call before any
/// expansion or solve.
void register_method(method_descriptor method);

/// Whether a model parameter takes part in the points of a method (α only for finite-α methods,
/// r_k and r_v only for those with an ERM penalty; every other model parameter always).
[[nodiscard]] bool uses_model_parameter(const method_descriptor& method, std::string_view name);
/// Every parameter a method's points take: the model parameters it uses (model order), then its
/// options (declared order).
[[nodiscard]] std::vector<const grid::parameter_spec*> method_parameters(const method_descriptor& method);
/// The model a method belongs to.
[[nodiscard]] const model_descriptor& model_of(const method_descriptor& method);
/// The declaration of a parameter of any model or an option of any method (nullptr if none).
[[nodiscard]] const grid::parameter_spec* find_parameter(std::string_view name);

/// A value of a parameter that cannot be combined with the others (e.g. ν = ∞ with the spiked task).
class parameter_error : public std::invalid_argument {
public:
  parameter_error(std::string parameter, const std::string& reason)
      : std::invalid_argument(reason), parameter_(std::move(parameter)) {}
  [[nodiscard]] const std::string& parameter() const noexcept { return parameter_; }

private:
  std::string parameter_;
};

/// Builds a completed point (complete_point) of a method from canonical values of its declared
/// parameters; model parameters not given take their defaults. Throws std::invalid_argument naming
/// the parameter (unknown to the method, missing without a default, out of range, …).
[[nodiscard]] grid::point make_point(const method_descriptor& method,
                                     const std::map<std::string, std::string>& values);

/// The typed archive cells of a completed point: the model parameters it has (erf_offset only for
/// erf, α and r only where used), then every option of its method (also those left out of its
/// identity at their default), typed by their declarations.
[[nodiscard]] std::vector<grid::parameter_value> point_parameters(const grid::point& point);
/// The same cells for a row read back from an archive of the first schema, whose options were
/// untyped text: options declared by the method are typed by the declaration, others guessed.
[[nodiscard]] std::vector<grid::parameter_value> retype_parameters(std::string_view method,
                                                                   std::vector<grid::parameter_value> cells);

/// Checks one option value against its spec and returns its canonical text; throws
/// std::invalid_argument "option '<name>': <reason>".
[[nodiscard]] std::string canonical_option(const option_spec& spec, std::string_view value);

/// Validates a point for its method: fills defaulted options, canonicalises values, rejects
/// unknown options and out-of-range α, r. Throws std::invalid_argument naming the field.
void complete_point(grid::point& point);

/// Reads an option of a completed point as a number / text (throws std::out_of_range if absent).
[[nodiscard]] double option_number(const grid::point& point, std::string_view name);
[[nodiscard]] const std::string& option_text(const grid::point& point, std::string_view name);

/// Runs the method's solver. Exceptions become status failed with the message; the record's
/// wall_s is always set.
[[nodiscard]] grid::result_record solve_point(const grid::point& point, const run_context& context);

} // namespace slr::methods
