#include "slr/query/table.hpp"

#include <limits>

#include <cmath>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "slr/archive/reader.hpp"
#include "slr/grid/point.hpp"

namespace slr::query {

column column::make(std::string name, column_kind kind, bool is_result) {
  column c;
  c.name = std::move(name);
  c.kind = kind;
  c.is_result = is_result;
  return c;
}

std::size_t column::size() const noexcept {
  switch (kind) {
  case column_kind::number: return numbers.size();
  case column_kind::integer: return integers.size();
  case column_kind::text: return texts.size();
  }
  return 0;
}

std::string column::cell_text(std::size_t row) const {
  switch (kind) {
  case column_kind::number: return grid::format_number(numbers[row]);
  case column_kind::integer: return std::to_string(integers[row]);
  case column_kind::text: return texts[row];
  }
  return {};
}

bool column::same(std::size_t a, std::size_t b) const {
  switch (kind) {
  case column_kind::number: {
    const double x = numbers[a], y = numbers[b];
    return x == y || (std::isnan(x) && std::isnan(y));
  }
  case column_kind::integer: return integers[a] == integers[b];
  case column_kind::text: return texts[a] == texts[b];
  }
  return false;
}

bool column::less(std::size_t a, std::size_t b) const {
  switch (kind) {
  case column_kind::number: {
    const double x = numbers[a], y = numbers[b];
    // NaN sorts last (and equal to NaN) so that the order stays strict-weak.
    return std::make_tuple(std::isnan(x), std::isnan(x) ? 0.0 : x) < std::make_tuple(std::isnan(y), std::isnan(y) ? 0.0 : y);
  }
  case column_kind::integer: return integers[a] < integers[b];
  case column_kind::text: return texts[a] < texts[b];
  }
  return false;
}

const column* table::find(std::string_view name) const noexcept {
  for (const auto& c : columns)
    if (c.name == name) return &c;
  return nullptr;
}

const column& table::at(std::string_view name, std::string_view argument) const {
  if (const auto* c = find(name)) return *c;
  std::string known;
  for (const auto& c : columns) known += (known.empty() ? "" : ", ") + c.name;
  // A column exists once a row has it: early in a sweep, the columns of a method appear with
  // its first finished point.
  throw std::invalid_argument(std::string(argument) + ": unknown column '" + std::string(name) +
                              "': no row read has it (a parameter or result column appears with the first finished "
                              "point that has it; columns now: " +
                              known + ")");
}

std::vector<std::string> table::names() const {
  std::vector<std::string> out;
  out.reserve(columns.size());
  for (const auto& c : columns) out.push_back(c.name);
  return out;
}

table table::take(const std::vector<std::size_t>& rows) const {
  table out;
  out.columns.reserve(columns.size());
  for (const auto& c : columns) {
    column copy;
    copy.name = c.name;
    copy.kind = c.kind;
    copy.is_result = c.is_result;
    copy.is_parameter = c.is_parameter;
    for (const auto r : rows) {
      switch (c.kind) {
      case column_kind::number: copy.numbers.push_back(c.numbers[r]); break;
      case column_kind::integer: copy.integers.push_back(c.integers[r]); break;
      case column_kind::text: copy.texts.push_back(c.texts[r]); break;
      }
    }
    out.columns.push_back(std::move(copy));
  }
  return out;
}

table table::select(const std::vector<std::string>& names, std::string_view argument) const {
  table out;
  for (const auto& name : names) out.columns.push_back(at(name, argument));
  return out;
}

std::vector<std::string> table::parameter_names() const {
  std::vector<std::string> names;
  for (const auto& c : columns)
    if (c.is_parameter && c.name != "repeat") names.push_back(c.name);
  if (const auto* r = find("repeat"); r != nullptr && r->is_parameter) names.emplace_back("repeat");
  return names;
}

bool table::has_length_pmf() const {
  const auto* lengths = find("L");
  const auto* laws = find("L_pmf");
  if (laws == nullptr || laws->kind != column_kind::text) return false;
  for (std::size_t r = 0; r < rows(); ++r)
    if (!laws->texts[r].empty() && (lengths == nullptr || lengths->kind != column_kind::number ||
                                    std::isnan(lengths->numbers[r])))
      return true;
  return false;
}

table from_rows(const std::vector<archive::point_row>& rows) {
  table t;
  const auto add_number = [&](const char* name, auto get) {
    auto c = column::make(name, column_kind::number);
    c.numbers.reserve(rows.size());
    for (const auto& r : rows) c.numbers.push_back(static_cast<double>(get(r)));
    t.columns.push_back(std::move(c));
  };
  const auto add_integer = [&](const char* name, auto get) {
    auto c = column::make(name, column_kind::integer);
    c.integers.reserve(rows.size());
    for (const auto& r : rows) c.integers.push_back(get(r));
    t.columns.push_back(std::move(c));
  };
  const auto add_text = [&](const char* name, std::string archive::point_row::*field) {
    auto c = column::make(name, column_kind::text);
    c.texts.reserve(rows.size());
    for (const auto& r : rows) c.texts.push_back(r.*field);
    t.columns.push_back(std::move(c));
  };
  using row = archive::point_row;
  add_integer("point_id", [](const row& r) { return r.point_id; });
  add_number("repeat", [](const row& r) { return r.repeat; });
  add_integer("seed", [](const row& r) { return r.seed; });
  add_text("method", &row::method);
  t.columns.back().is_parameter = true;
  t.columns[1].is_parameter = true; // repeat
  // Parameter columns: the union of the rows' parameter names, in first-seen order.
  std::unordered_set<std::string> parameter_names;
  {
    std::vector<column> parameters;
    std::unordered_map<std::string, std::size_t> where;
    for (const auto& r : rows)
      for (const auto& cell : r.parameters) {
        const auto [it, inserted] = where.emplace(cell.name, parameters.size());
        if (inserted) {
          parameters.push_back(column::make(cell.name, column_kind::number));
          parameters.back().is_parameter = true;
        }
        if (cell.type == grid::parameter_value::kind::text) parameters[it->second].kind = column_kind::text;
      }
    for (auto& c : parameters) {
      if (c.kind == column_kind::text) c.texts.assign(rows.size(), std::string());
      else c.numbers.assign(rows.size(), std::nan(""));
    }
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (const auto& cell : rows[i].parameters) {
        auto& c = parameters[where.at(cell.name)];
        if (c.kind == column_kind::text) c.texts[i] = cell.to_text();
        else c.numbers[i] = cell.to_number();
      }
    for (auto& c : parameters) {
      parameter_names.insert(c.name);
      t.columns.push_back(std::move(c));
    }
  }
  add_text("status", &row::status);
  add_text("message", &row::message);
  add_number("run_index", [](const row& r) { return r.run_index; });
  add_number("completed_unix", [](const row& r) { return r.completed_unix; });

  // Result columns: the union of value names, in first-seen order (archive order).
  std::vector<std::string> value_names;
  std::unordered_map<std::string, std::size_t> index;
  for (const auto& r : rows)
    for (const auto& n : r.value_names)
      if (index.emplace(n, value_names.size()).second) value_names.push_back(n);
  const std::size_t first = t.columns.size();
  const auto is_parameter = [&](const std::string& name) { return parameter_names.contains(name); };
  for (const auto& n : value_names) {
    auto c = column::make(archive::result_column_of(n, is_parameter), column_kind::number); // as in the .h5
    c.is_result = true;
    c.numbers.assign(rows.size(), std::nan(""));
    t.columns.push_back(std::move(c));
  }
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t v = 0; v < rows[i].value_names.size() && v < rows[i].values.size(); ++v)
      t.columns[first + index.at(rows[i].value_names[v])].numbers[i] = rows[i].values[v];
  return t;
}

table load_archive(const std::filesystem::path& path) { return from_rows(archive::reader(path).points()); }

table concatenate(const std::vector<std::pair<std::string, table>>& parts, const std::string& tag_column) {
  table out;
  out.columns.push_back(column::make(tag_column, column_kind::text));
  for (const auto& [label, part] : parts)
    for (const auto& c : part.columns) {
      if (c.name == tag_column) throw std::invalid_argument("cannot tag rows: a column is already named " + tag_column);
      const auto* known = out.find(c.name);
      if (known == nullptr) {
        out.columns.push_back(column::make(c.name, c.kind, c.is_result));
        out.columns.back().is_parameter = c.is_parameter;
      }
      else if (known->kind != c.kind)
        throw std::invalid_argument("column '" + c.name + "' has different types in different archives");
    }
  for (const auto& [label, part] : parts) {
    const std::size_t n = part.rows();
    for (auto& c : out.columns) {
      if (c.name == tag_column) {
        c.texts.insert(c.texts.end(), n, label);
        continue;
      }
      const auto* source = part.find(c.name);
      switch (c.kind) {
      case column_kind::number:
        if (source) c.numbers.insert(c.numbers.end(), source->numbers.begin(), source->numbers.end());
        else c.numbers.insert(c.numbers.end(), n, std::numeric_limits<double>::quiet_NaN());
        break;
      case column_kind::integer:
        if (source) c.integers.insert(c.integers.end(), source->integers.begin(), source->integers.end());
        else c.integers.insert(c.integers.end(), n, 0);
        break;
      case column_kind::text:
        if (source) c.texts.insert(c.texts.end(), source->texts.begin(), source->texts.end());
        else c.texts.insert(c.texts.end(), n, std::string());
        break;
      }
    }
  }
  return out;
}

} // namespace slr::query
