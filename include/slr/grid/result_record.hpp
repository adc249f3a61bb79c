#pragma once
// What a solver returns for one point: a status, an optional message and named numeric
// results from one fixed schema (result_columns), shared by the JSON output of
// `slr-sweep point` and the columns of the HDF5 archive. Columns a method does not produce
// stay NaN. Dotted names nest in JSON ("order_parameters.m_kk" → {"order_parameters": {"m_kk"}}).
#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slr/model/order_parameters.hpp"

namespace slr::grid {

/// The result columns, in archive order.
inline constexpr std::array<std::string_view, 40> result_columns = {
    "risk", "risk_stderr", "bayes_risk", "bayes_risk_stderr",
    "test_risk", "test_risk_stderr", "train_loss", "train_loss_regularised",
    "order_parameters.m_kk", "order_parameters.m_kv", "order_parameters.m_vk", "order_parameters.m_vv",
    "order_parameters.q_kk", "order_parameters.q_kv", "order_parameters.q_vv",
    "V.kk", "V.kv", "V.vv",
    "hat.m_kk", "hat.m_kv", "hat.m_vk", "hat.m_vv", "hat.q_kk", "hat.q_kv", "hat.q_vv",
    "hat.v_kk", "hat.v_kv", "hat.v_vv",
    "iterations", "residual", "free_entropy", "free_entropy_other", "nonpd_fraction",
    "D", "N", "grad_evals", "grad_time_s", "rel_grad", "peak_rss_mb", "wall_s"};

/// The result columns that measure the run rather than the point (time, memory): two runs of the
/// same point agree in every other column bit for bit (`merge` compares them so), not in these.
inline constexpr std::array<std::string_view, 3> measurement_columns = {"grad_time_s", "peak_rss_mb", "wall_s"};
/// Whether a result column or an extra_json key is such a measurement: measurement_columns, and
/// every extra_json key ending in "_seconds" (the methods' wall-clock splits, e.g. channel_seconds).
[[nodiscard]] bool is_measurement(std::string_view name) noexcept;

/// Position of a column; throws std::out_of_range for an unknown name.
[[nodiscard]] std::size_t column_index(std::string_view name);

/// ok: converged/finished; unbounded: an optimum ran to its cap; not_converged, diverged:
/// iterative solvers; failed: an exception (message set); timeout: the wall-time cap hit.
/// other_branch, unphysical: a converged theory state that fails a physical check (the message
/// says which): not the informed branch, or impossible as the minimum it stands for.
enum class status { ok, unbounded, not_converged, diverged, failed, timeout, other_branch, unphysical };
[[nodiscard]] std::string_view status_name(status s) noexcept;
/// Throws std::invalid_argument for an unknown name.
[[nodiscard]] status parse_status(std::string_view name);

struct result_record {
  grid::status status = grid::status::ok;
  std::string message;     ///< empty unless failed/timeout, or a note
  std::string extra_json;  ///< optional JSON object text of method-specific extras (e.g. a trajectory)
  std::array<double, result_columns.size()> values;
  /// Result columns of one method only (names outside result_columns, e.g. the bracket of a
  /// located jump), in the method's order; archived as columns of their own, NaN in other rows.
  std::vector<std::pair<std::string, double>> method_values;

  result_record() { values.fill(std::numeric_limits<double>::quiet_NaN()); }
  /// Throws std::out_of_range for a name not in result_columns.
  void set(std::string_view name, double value) { values[column_index(name)] = value; }
  [[nodiscard]] double get(std::string_view name) const { return values[column_index(name)]; }
  /// Sets (or replaces) a method-specific column; throws std::invalid_argument for a name of
  /// result_columns or one that is not [A-Za-z0-9_]+.
  void set_method_value(std::string_view name, double value);
  /// A method-specific column, or NaN if absent.
  [[nodiscard]] double method_value(std::string_view name) const;
  /// Sets the seven order_parameters.* columns.
  void set_order_parameters(const model::order_parameters& op);
  /// The seven order_parameters.* columns, or nullopt if any is not finite (not measured).
  [[nodiscard]] std::optional<model::order_parameters> order_parameters() const;
};

} // namespace slr::grid
