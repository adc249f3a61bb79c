#include "slr/query/grid.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
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

/// A cell that does not apply to its point: NaN (numbers) or "" (text).
bool missing(const column& c, std::size_t row) {
  switch (c.kind) {
  case column_kind::number: return std::isnan(c.numbers[row]);
  case column_kind::text: return c.texts[row].empty();
  case column_kind::integer: return false;
  }
  return false;
}

bool all_missing(const column& c) {
  for (std::size_t r = 0; r < c.size(); ++r)
    if (!missing(c, r)) return false;
  return true;
}

/// The distinct values of a column in sorted order (column::less: numbers ascending, NaN last;
/// text lexicographic) and each row's index among them. A missing value is a value of its own.
struct encoding {
  std::vector<std::size_t> code;  ///< per row: index of its value
  std::vector<std::size_t> first; ///< per distinct value: a row holding it
};

encoding encode(const column& c) {
  std::vector<std::size_t> order(c.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return c.less(x, y); });
  encoding e;
  e.code.resize(c.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || !c.same(order[i - 1], order[i])) e.first.push_back(order[i]);
    e.code[order[i]] = e.first.size() - 1;
  }
  return e;
}

/// Functional dependence between the columns of one table (encodings computed once per column).
class dependence {
public:
  explicit dependence(const table& points) : points_(points) {}

  const encoding& codes(const std::string& name) {
    auto it = codes_.find(name);
    if (it == codes_.end()) it = codes_.emplace(name, encode(points_.at(name, "--axes"))).first;
    return it->second;
  }

  /// Whether c is determined by d: over the rows of each value of d, the non-missing values of c
  /// are at most one distinct value.
  bool determined_by(const std::string& c, const std::string& d) {
    const auto& column = points_.at(c, "--axes");
    const auto& by = codes(d);
    std::vector<std::ptrdiff_t> seen(by.first.size(), -1);
    for (std::size_t r = 0; r < column.size(); ++r) {
      if (missing(column, r)) continue;
      auto& s = seen[by.code[r]];
      if (s < 0) s = static_cast<std::ptrdiff_t>(r);
      else if (!column.same(static_cast<std::size_t>(s), r)) return false;
    }
    return true;
  }

private:
  const table& points_;
  std::map<std::string, encoding> codes_;
};

struct dimension {
  std::string name;
  std::vector<std::string> coordinates;
};

/// The greedy assignment of grid.hpp: each varying column (in order) a coordinate of the first
/// dimension that determines it, or a new dimension that takes over the dimensions it determines.
std::vector<dimension> infer_dimensions(const std::vector<std::string>& varying, dependence& dep) {
  std::vector<dimension> dims;
  const auto place = [&](const auto& self, const std::string& c, bool may_demote) -> void {
    if (c != "repeat") // repeat (an independent seed) is a dimension whenever it varies
      for (auto& d : dims)
        if (dep.determined_by(c, d.name)) {
          d.coordinates.push_back(c);
          return;
        }
    dimension added{c, {}};
    std::vector<std::string> pending; // coordinates of a demoted dimension that c does not determine
    std::size_t position = dims.size();
    if (may_demote && c != "repeat") {
      for (std::size_t i = 0; i < dims.size();) {
        if (dims[i].name == "repeat" || !dep.determined_by(dims[i].name, c)) {
          ++i;
          continue;
        }
        position = std::min(position, i);
        added.coordinates.push_back(dims[i].name);
        for (const auto& e : dims[i].coordinates) (dep.determined_by(e, c) ? added.coordinates : pending).push_back(e);
        dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(position), std::move(added));
    // Placed anew without demoting (which bounds the work; such columns are rare: a coordinate
    // that depends on its dimension only through its missing values).
    for (const auto& e : pending) self(self, e, false);
  };
  for (const auto& c : varying) place(place, c, true);
  return dims;
}

void describe(const grid_options& options, const std::string& name, std::string& long_name, std::string& units) {
  if (const auto it = options.descriptions.find(name); it != options.descriptions.end()) {
    long_name = it->second.long_name;
    units = it->second.units;
  }
  if (long_name.empty()) long_name = name;
}

} // namespace

grid_build make_grid(const table& points, const grid_options& options) {
  if (points.rows() == 0) throw std::invalid_argument("export: no points to export (check --where / --status)");
  const auto parameters = points.parameter_names();
  std::vector<std::string> varying;
  for (const auto& p : parameters)
    if (const auto* c = points.find(p); c != nullptr && varies(*c)) varying.push_back(p);

  dependence dep(points);
  std::vector<dimension> dims;
  if (options.axes.empty()) {
    dims = infer_dimensions(varying, dep);
  } else {
    for (const auto& a : options.axes) {
      const auto& c = points.at(a, "--axes");
      if (c.kind == column_kind::integer)
        throw std::invalid_argument("--axes: '" + a + "' is an identifier, not a grid axis");
      if (std::count(options.axes.begin(), options.axes.end(), a) > 1)
        throw std::invalid_argument("--axes: '" + a + "' given twice");
      dims.push_back({a, {}});
    }
    for (const auto& p : varying) {
      if (contains(options.axes, p)) continue;
      const auto it = std::find_if(dims.begin(), dims.end(), [&](const dimension& d) { return dep.determined_by(p, d.name); });
      if (it == dims.end())
        throw std::invalid_argument("--axes: parameter '" + p +
                                    "' varies but is not an axis nor a function of one; add it to --axes or fix it "
                                    "with --where");
      it->coordinates.push_back(p);
    }
  }

  grid_build build;
  auto& data = build.data;
  std::vector<std::string> dimension_names, coordinate_names;
  for (std::size_t a = 0; a < dims.size(); ++a) {
    const auto& c = points.at(dims[a].name, "--axes");
    const auto& codes = dep.codes(c.name);
    archive::grid_axis axis;
    axis.name = c.name;
    axis.is_text = c.kind == column_kind::text;
    for (const auto row : codes.first) {
      if (axis.is_text) axis.texts.push_back(c.texts[row]);
      else axis.numbers.push_back(c.numbers[row]);
    }
    describe(options, axis.name, axis.long_name, axis.units);
    data.axes.push_back(std::move(axis));
    dimension_names.push_back(c.name);
    // Its coordinates: for each value of the dimension, the one value of the coordinate there.
    for (const auto& name : dims[a].coordinates) {
      const auto& k = points.at(name, "--axes");
      archive::grid_coordinate coordinate;
      coordinate.name = name;
      coordinate.axis = a;
      coordinate.is_text = k.kind == column_kind::text;
      const auto n = codes.first.size();
      if (coordinate.is_text) coordinate.texts.assign(n, "");
      else coordinate.numbers.assign(n, std::nan(""));
      std::vector<bool> set(n, false);
      for (std::size_t r = 0; r < points.rows(); ++r) {
        const auto i = codes.code[r];
        if (set[i] || missing(k, r)) continue;
        set[i] = true;
        if (coordinate.is_text) coordinate.texts[i] = k.texts[r];
        else coordinate.numbers[i] = k.numbers[r];
      }
      describe(options, name, coordinate.long_name, coordinate.units);
      data.coordinates.push_back(std::move(coordinate));
      coordinate_names.push_back(name);
    }
  }
  // Coordinates in parameter order (method options after the model's parameters, …).
  const auto rank = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(parameters.begin(), parameters.end(), name) - parameters.begin());
  };
  std::stable_sort(data.coordinates.begin(), data.coordinates.end(),
                   [&](const auto& x, const auto& y) { return rank(x.name) < rank(y.name); });

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
  std::vector<const encoding*> row_index;
  for (const auto& d : dims) row_index.push_back(&dep.codes(d.name));
  std::vector<std::ptrdiff_t> owner(cells, -1);
  for (std::size_t r = 0; r < points.rows(); ++r) {
    std::size_t cell = 0;
    for (std::size_t a = 0; a < dims.size(); ++a) cell = cell * data.axes[a].size() + row_index[a]->code[r];
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
    if (contains(dimension_names, name) || contains(coordinate_names, name)) continue;
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
  for (const auto& p : parameters) {
    const auto* c = points.find(p);
    if (c != nullptr && !contains(dimension_names, p) && !contains(coordinate_names, p) && !varies(*c) &&
        !all_missing(*c))
      data.attributes[p] = c->cell_text(0);
  }
  return build;
}

std::map<std::string, archive::parameter_description> parse_parameter_descriptions(std::string_view json) {
  std::map<std::string, archive::parameter_description> out;
  const auto parsed = nlohmann::json::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return out;
  for (const auto& [name, entry] : parsed.items()) {
    if (!entry.is_object()) continue;
    archive::parameter_description d;
    if (const auto it = entry.find("long_name"); it != entry.end() && it->is_string()) d.long_name = it->get<std::string>();
    if (const auto it = entry.find("units"); it != entry.end() && it->is_string()) d.units = it->get<std::string>();
    out[name] = std::move(d);
  }
  return out;
}

} // namespace slr::query
