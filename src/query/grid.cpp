#include "slr/query/grid.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace slr::query {
namespace {

bool varies(const column& c) {
  for (std::size_t r = 1; r < c.size(); ++r)
    if (!c.same(0, r)) return true;
  return false;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

} // namespace

grid_build make_grid(const table& points, const grid_options& options) {
  if (points.rows() == 0) throw std::invalid_argument("export: no points to export (check --where / --status)");
  const bool has_pmf = points.has_length_pmf();
  std::vector<std::string> axes = options.axes;
  if (axes.empty()) {
    for (const auto& p : points.parameter_names()) {
      const auto* c = points.find(p);
      if (c == nullptr || !varies(*c)) continue;
      if ((p == "L" && has_pmf) || (p == "L_pmf" && !has_pmf)) continue;
      axes.push_back(p);
    }
  } else {
    for (const auto& a : axes) {
      const auto& c = points.at(a, "--axes");
      if (c.kind == column_kind::integer)
        throw std::invalid_argument("--axes: '" + a + "' is an identifier, not a grid axis");
      if (std::count(axes.begin(), axes.end(), a) > 1) throw std::invalid_argument("--axes: '" + a + "' given twice");
    }
    for (const auto& p : points.parameter_names()) {
      const auto* c = points.find(p);
      if (c == nullptr || contains(axes, p) || !varies(*c)) continue;
      // L and L_pmf carry the same information for fixed lengths.
      if ((p == "L" && contains(axes, "L_pmf")) || (p == "L_pmf" && contains(axes, "L"))) continue;
      throw std::invalid_argument("--axes: parameter '" + p + "' varies but is not an axis; add it to --axes or fix it with --where");
    }
  }

  grid_build build;
  auto& data = build.data;
  // Axis coordinates: sorted distinct values, and each row's index on each axis.
  std::vector<std::vector<std::size_t>> row_index(axes.size(), std::vector<std::size_t>(points.rows()));
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const auto& c = points.at(axes[a], "--axes");
    std::vector<std::size_t> order(points.rows());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return c.less(x, y); });
    archive::grid_axis axis;
    axis.name = c.name;
    axis.is_text = c.kind == column_kind::text;
    std::size_t position = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (i > 0 && !c.same(order[i - 1], order[i])) ++position;
      if (i == 0 || !c.same(order[i - 1], order[i])) {
        if (axis.is_text) axis.texts.push_back(c.texts[order[i]]);
        else axis.numbers.push_back(c.numbers[order[i]]);
      }
      row_index[a][order[i]] = position;
    }
    data.axes.push_back(std::move(axis));
  }
  std::size_t cells = 1;
  for (const auto& axis : data.axes) {
    cells *= axis.size();
    // A guard against exporting a whole mixed archive as one mostly empty hypercube.
    if (cells > 50'000'000)
      throw std::invalid_argument("--axes: the grid would have more than 5e7 cells for " +
                                  std::to_string(points.rows()) + " points; select a part with --where (e.g. method=…)");
  }

  // Cell of each row (row-major, first axis outermost); on a collision the latest row wins.
  const auto* completed = points.find("completed_unix");
  std::vector<std::ptrdiff_t> owner(cells, -1);
  for (std::size_t r = 0; r < points.rows(); ++r) {
    std::size_t cell = 0;
    for (std::size_t a = 0; a < axes.size(); ++a) cell = cell * data.axes[a].size() + row_index[a][r];
    if (owner[cell] >= 0) {
      ++build.duplicate_rows;
      const auto previous = static_cast<std::size_t>(owner[cell]);
      if (completed != nullptr && completed->numbers[r] < completed->numbers[previous]) continue;
    }
    owner[cell] = static_cast<std::ptrdiff_t>(r);
  }

  std::vector<std::string> variables = options.variables;
  if (variables.empty()) {
    for (const auto& c : points.columns)
      if (c.is_result && std::any_of(c.numbers.begin(), c.numbers.end(), [](double x) { return !std::isnan(x); }))
        variables.push_back(c.name);
  }
  for (const auto& name : variables) {
    const auto& c = points.at(name, "--columns");
    if (contains(axes, name)) continue;
    if (c.kind != column_kind::number)
      throw std::invalid_argument("--columns: '" + name + "' is not numeric; the grid holds numeric columns (and status)");
    archive::grid_variable v{name, std::vector<double>(cells, std::nan(""))};
    for (std::size_t cell = 0; cell < cells; ++cell)
      if (owner[cell] >= 0) v.values[cell] = c.numbers[static_cast<std::size_t>(owner[cell])];
    data.variables.push_back(std::move(v));
  }
  if (const auto* status = points.find("status")) {
    archive::grid_text_variable v{"status", std::vector<std::string>(cells)};
    for (std::size_t cell = 0; cell < cells; ++cell)
      if (owner[cell] >= 0) v.values[cell] = status->texts[static_cast<std::size_t>(owner[cell])];
    data.text_variables.push_back(std::move(v));
  }
  for (const auto& p : points.parameter_names()) {
    const auto* c = points.find(p);
    if (c != nullptr && !contains(axes, p) && !varies(*c)) data.attributes[p] = c->cell_text(0);
  }
  return build;
}

} // namespace slr::query
