#include "slr/job/job_file.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "slr/grid/point.hpp"
#include "slr/methods/registry.hpp"

namespace slr::job {

const std::vector<std::string_view>& axis_names() {
  static const std::vector<std::string_view> names = {"task",       "nu",    "L",   "delta", "activation",
                                                      "erf_offset", "alpha", "r_k", "r_v"};
  return names;
}

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

std::string type_name(const toml::node& node) {
  switch (node.type()) {
  case toml::node_type::string: return "a string";
  case toml::node_type::integer: return "an integer";
  case toml::node_type::floating_point: return "a float";
  case toml::node_type::boolean: return "a boolean";
  case toml::node_type::array: return "an array";
  case toml::node_type::table: return "a table";
  case toml::node_type::date:
  case toml::node_type::time:
  case toml::node_type::date_time: return "a date/time";
  default: return "nothing";
  }
}

// Which axes a [grid] table (top-level or per method) sets explicitly.
struct grid_table {
  grid_axes axes;
  std::set<std::string> given;
  bool zip_given = false;
  bool repeats_given = false;
  const toml::node* zip_node = nullptr;
};

class job_parser {
public:
  job_parser(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& reason, const toml::node* node = nullptr) const {
    std::size_t line = 0, column = 0;
    if (node != nullptr) {
      line = node->source().begin.line;
      column = node->source().begin.column;
    }
    throw job_error(source_, field, reason, line, column);
  }

  job_spec parse(std::string_view text) {
    toml::table root;
    try {
      root = toml::parse(text, source_);
    } catch (const toml::parse_error& e) {
      throw job_error(source_, "", "TOML syntax error: " + std::string(e.description()), e.source().begin.line,
                      e.source().begin.column);
    }
    job_spec job;
    job.source_name = source_;
    job.text = std::string(text);

    for (auto&& [key, node] : root) {
      const std::string k(key.str());
      if (k != "name" && k != "seed" && k != "description" && k != "grid" && k != "method")
        fail(k, "unknown key (expected name, seed, description, grid, [[method]])", &node);
    }

    const auto* name = root.get("name");
    if (name == nullptr) fail("name", "missing (the sweep name is required)");
    if (!name->is_string()) fail("name", "expected a string, got " + type_name(*name), name);
    job.name = name->as_string()->get();
    if (job.name.empty() || !std::all_of(job.name.begin(), job.name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
        }))
      fail("name", "'" + job.name + "' must be non-empty and use only letters, digits, '.', '_', '-'", name);

    const auto* seed = root.get("seed");
    if (seed == nullptr) fail("seed", "missing (the master seed is required)");
    if (!seed->is_integer()) fail("seed", "expected an integer >= 0, got " + type_name(*seed), seed);
    if (seed->as_integer()->get() < 0) fail("seed", "must be >= 0", seed);
    job.master_seed = static_cast<std::uint64_t>(seed->as_integer()->get());

    if (const auto* description = root.get("description")) {
      if (!description->is_string())
        fail("description", "expected a string, got " + type_name(*description), description);
      job.description = description->as_string()->get();
    }

    grid_table top;
    if (const auto* grid = root.get("grid")) {
      if (!grid->is_table()) fail("grid", "expected a table, got " + type_name(*grid), grid);
      top = parse_grid(*grid->as_table(), "grid");
    }

    const auto* methods = root.get("method");
    if (methods == nullptr) fail("method", "missing: at least one [[method]] entry is required");
    if (!methods->is_array_of_tables())
      fail("method", "expected an array of tables ([[method]] entries), got " + type_name(*methods), methods);
    const auto& array = *methods->as_array();
    if (array.empty()) fail("method", "at least one [[method]] entry is required", methods);
    for (std::size_t i = 0; i < array.size(); ++i)
      job.methods.push_back(parse_method(*array[i].as_table(), "method[" + std::to_string(i + 1) + "]", top));
    return job;
  }

private:
  std::string source_;

  // ---- numbers -------------------------------------------------------------------------
  double number(const toml::node& node, const std::string& field, bool allow_inf) const {
    if (node.is_integer()) return static_cast<double>(node.as_integer()->get());
    if (node.is_floating_point()) {
      const double v = node.as_floating_point()->get();
      if (std::isnan(v)) fail(field, "nan is not allowed", &node);
      if (std::isinf(v) && !allow_inf) fail(field, "must be finite", &node);
      return v;
    }
    if (node.is_string() && allow_inf) {
      const auto& s = node.as_string()->get();
      if (s == "inf" || s == "infinity") return infinity;
      fail(field, "'" + s + "' is not a number or \"inf\"", &node);
    }
    fail(field, std::string("expected a number") + (allow_inf ? " or \"inf\"" : "") + ", got " + type_name(node),
         &node);
  }

  // {linspace = [a, b, n]} or {logspace = [a, b, n]} (10^a … 10^b).
  std::vector<double> generator(const toml::table& table, const std::string& field) const {
    if (table.size() != 1) fail(field, "a generator table holds exactly one of linspace or logspace", &table);
    const auto first = table.begin();
    const std::string kind(first->first.str());
    const toml::node& node = first->second;
    if (kind != "linspace" && kind != "logspace")
      fail(field + "." + kind, "unknown generator (expected linspace = [a, b, n] or logspace = [a, b, n])", &node);
    const std::string gfield = field + "." + kind;
    const auto* arr = node.as_array();
    if (arr == nullptr || arr->size() != 3)
      fail(gfield, "expected [start, stop, count] (three numbers)", &node);
    const double a = number((*arr)[0], gfield + "[1]", false);
    const double b = number((*arr)[1], gfield + "[2]", false);
    const auto* n_node = &(*arr)[2];
    if (!n_node->is_integer()) fail(gfield + "[3]", "the count must be an integer, got " + type_name(*n_node), n_node);
    const auto n = n_node->as_integer()->get();
    if (n < 1) fail(gfield + "[3]", "the count must be >= 1, got " + std::to_string(n), n_node);
    if (n > 10'000'000) fail(gfield + "[3]", "the count " + std::to_string(n) + " is unreasonably large", n_node);
    std::vector<double> values(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      // Endpoints exact; interior points a + i (b − a)/(n − 1) as numpy.linspace.
      const double t = n == 1 ? a : (i == n - 1 ? b : a + static_cast<double>(i) * (b - a) / static_cast<double>(n - 1));
      values[static_cast<std::size_t>(i)] = kind == "linspace" ? t : std::pow(10.0, t);
    }
    if (kind == "logspace")
      for (double v : values)
        if (!std::isfinite(v) || v == 0) fail(gfield, "10^exponent overflows or underflows a double", &node);
    return values;
  }

  // Scalar, array of scalars or generator table → list of numbers (checked by `check`).
  template <class Check>
  std::vector<double> number_axis(const toml::node& node, const std::string& field, bool allow_inf, Check check) const {
    std::vector<double> values;
    if (const auto* table = node.as_table()) {
      values = generator(*table, field);
      for (double v : values)
        if (const std::string why = check(v); !why.empty())
          fail(field, "generated value " + grid::format_number(v) + " " + why, &node);
      return values;
    }
    if (const auto* arr = node.as_array()) {
      if (arr->empty()) fail(field, "empty axis (give at least one value)", &node);
      for (std::size_t i = 0; i < arr->size(); ++i) {
        const std::string efield = field + "[" + std::to_string(i + 1) + "]";
        const double v = number((*arr)[i], efield, allow_inf);
        if (const std::string why = check(v); !why.empty()) fail(efield, grid::format_number(v) + " " + why, (&(*arr)[i]));
        values.push_back(v);
      }
      return values;
    }
    const double v = number(node, field, allow_inf);
    if (const std::string why = check(v); !why.empty()) fail(field, grid::format_number(v) + " " + why, &node);
    return {v};
  }

  std::vector<std::string> string_axis(const toml::node& node, const std::string& field) const {
    std::vector<std::string> values;
    if (node.is_string()) return {node.as_string()->get()};
    const auto* arr = node.as_array();
    if (arr == nullptr) fail(field, "expected a string or an array of strings, got " + type_name(node), &node);
    if (arr->empty()) fail(field, "empty axis (give at least one value)", &node);
    for (std::size_t i = 0; i < arr->size(); ++i) {
      if (!(&(*arr)[i])->is_string())
        fail(field + "[" + std::to_string(i + 1) + "]", "expected a string, got " + type_name((*arr)[i]), (&(*arr)[i]));
      values.push_back((&(*arr)[i])->as_string()->get());
    }
    return values;
  }

  model::length_law one_length(const toml::node& node, const std::string& field) const {
    try {
      if (node.is_integer()) {
        const auto l = node.as_integer()->get();
        if (l < 1) fail(field, "L must be >= 1, got " + std::to_string(l), &node);
        return model::length_law::fixed(static_cast<std::size_t>(l));
      }
      if (node.is_string()) return model::length_law::parse(node.as_string()->get());
      if (const auto* table = node.as_table()) {
        if (table->empty()) fail(field, "empty pmf table", &node);
        std::vector<model::length_law::entry> pmf;
        for (auto&& [key, value] : *table) {
          const std::string k(key.str());
          std::size_t used = 0;
          long long l = 0;
          try {
            l = std::stoll(k, &used);
          } catch (const std::exception&) {
            used = 0;
          }
          if (used != k.size() || used == 0 || l < 1)
            fail(field + "." + k, "pmf keys are lengths (integers >= 1)", &value);
          pmf.push_back({static_cast<std::size_t>(l), number(value, field + "." + k, false)});
        }
        return model::length_law::from_pmf(std::move(pmf));
      }
    } catch (const std::invalid_argument& e) {
      if (dynamic_cast<const job_error*>(&e) != nullptr) throw;
      fail(field, e.what(), &node);
    }
    fail(field, "expected an integer L >= 1, a pmf table {1 = 0.25, 3 = 0.75} or text \"1:0.25,3:0.75\", got " +
                    type_name(node),
         &node);
  }

  std::vector<model::length_law> length_axis(const toml::node& node, const std::string& field) const {
    std::vector<model::length_law> values;
    if (const auto* table = node.as_table()) {
      const bool is_generator = table->contains("linspace") || table->contains("logspace");
      if (!is_generator) return {one_length(node, field)};
      for (double v : generator(*table, field)) {
        if (v < 1 || v != std::floor(v) || v > 1e9)
          fail(field, "generated length " + grid::format_number(v) + " is not an integer >= 1", &node);
        values.push_back(model::length_law::fixed(static_cast<std::size_t>(v)));
      }
      return values;
    }
    if (const auto* arr = node.as_array()) {
      if (arr->empty()) fail(field, "empty axis (give at least one value)", &node);
      for (std::size_t i = 0; i < arr->size(); ++i)
        values.push_back(one_length((*arr)[i], field + "[" + std::to_string(i + 1) + "]"));
      return values;
    }
    return {one_length(node, field)};
  }

  // ---- grid ---------------------------------------------------------------------------------
  grid_table parse_grid(const toml::table& table, const std::string& prefix) const {
    grid_table g;
    const auto non_negative = [](double v) { return v >= 0 ? std::string() : std::string("must be >= 0"); };
    const auto finite = [](double) { return std::string(); };
    const auto positive = [](double v) { return v > 0 ? std::string() : std::string("must be > 0"); };
    for (auto&& [key, node] : table) {
      const std::string k(key.str());
      const std::string field = prefix + "." + k;
      if (k == "task") {
        for (const auto& s : string_axis(node, field)) {
          try {
            g.axes.task.push_back(model::task::parse_kind(s));
          } catch (const std::invalid_argument&) {
            fail(field, "unknown task '" + s + "' (expected spiked or max)", &node);
          }
        }
      } else if (k == "activation") {
        for (const auto& s : string_axis(node, field)) {
          try {
            g.axes.activation.push_back(model::activation_spec::parse_kind(s));
          } catch (const std::invalid_argument&) {
            fail(field, "unknown activation '" + s + "' (expected softmax, linear, erf or softplus-kernel)", &node);
          }
        }
      } else if (k == "nu") {
        g.axes.nu = number_axis(node, field, true, non_negative);
      } else if (k == "L") {
        g.axes.L = length_axis(node, field);
      } else if (k == "delta") {
        g.axes.delta = number_axis(node, field, false, non_negative);
      } else if (k == "erf_offset") {
        g.axes.erf_offset = number_axis(node, field, false, finite);
      } else if (k == "alpha") {
        g.axes.alpha = number_axis(node, field, false, positive);
      } else if (k == "r_k") {
        g.axes.r_k = number_axis(node, field, false, non_negative);
      } else if (k == "r_v") {
        g.axes.r_v = number_axis(node, field, false, non_negative);
      } else if (k == "repeats") {
        if (!node.is_integer()) fail(field, "expected an integer >= 1, got " + type_name(node), &node);
        const auto r = node.as_integer()->get();
        if (r < 1 || r > 1'000'000) fail(field, "must be in [1, 1000000], got " + std::to_string(r), &node);
        g.axes.repeats = static_cast<std::uint32_t>(r);
        g.repeats_given = true;
        continue;
      } else if (k == "zip") {
        g.zip_given = true;
        g.zip_node = &node;
        const auto* groups = node.as_array();
        if (groups == nullptr) fail(field, "expected an array of arrays of axis names", &node);
        std::set<std::string> used;
        for (std::size_t i = 0; i < groups->size(); ++i) {
          const std::string gfield = field + "[" + std::to_string(i + 1) + "]";
          const auto names = string_axis((*groups)[i], gfield);
          if (names.size() < 2) fail(gfield, "a zip group names at least two axes", &(*groups)[i]);
          for (const auto& name : names) {
            if (std::find(axis_names().begin(), axis_names().end(), name) == axis_names().end())
              fail(gfield, "'" + name + "' is not a grid axis", &(*groups)[i]);
            if (!used.insert(name).second) fail(gfield, "axis '" + name + "' appears in two zip groups", &(*groups)[i]);
          }
          g.axes.zip.push_back(names);
        }
        continue;
      } else {
        fail(field, "unknown grid key (expected task, nu, L, delta, activation, erf_offset, alpha, r_k, r_v, "
                    "zip, repeats)",
             &node);
      }
      g.given.insert(k);
    }
    return g;
  }

  static std::size_t axis_length(const grid_axes& axes, const std::string& name) {
    if (name == "task") return axes.task.size();
    if (name == "nu") return axes.nu.size();
    if (name == "L") return axes.L.size();
    if (name == "delta") return axes.delta.size();
    if (name == "activation") return axes.activation.size();
    if (name == "erf_offset") return axes.erf_offset.size();
    if (name == "alpha") return axes.alpha.size();
    if (name == "r_k") return axes.r_k.size();
    return axes.r_v.size();
  }

  // Merges the top-level grid with a method's overrides, fills defaults and checks zips.
  grid_axes merge(const grid_table& top, const grid_table* own, const std::string& entry,
                  const methods::method_descriptor& method) const {
    grid_axes axes = top.axes;
    std::set<std::string> given = top.given;
    const toml::node* zip_node = top.zip_node;
    std::string zip_field = "grid.zip";
    if (own != nullptr) {
      const auto& o = own->axes;
      for (const auto& name : own->given) {
        given.insert(name);
        if (name == "task") axes.task = o.task;
        else if (name == "nu") axes.nu = o.nu;
        else if (name == "L") axes.L = o.L;
        else if (name == "delta") axes.delta = o.delta;
        else if (name == "activation") axes.activation = o.activation;
        else if (name == "erf_offset") axes.erf_offset = o.erf_offset;
        else if (name == "alpha") axes.alpha = o.alpha;
        else if (name == "r_k") axes.r_k = o.r_k;
        else if (name == "r_v") axes.r_v = o.r_v;
      }
      if (own->zip_given) {
        axes.zip = o.zip;
        zip_node = own->zip_node;
        zip_field = entry + ".grid.zip";
      }
      if (own->repeats_given) axes.repeats = o.repeats;
    }
    if (axes.task.empty()) axes.task = {model::task_kind::spiked};
    if (axes.nu.empty()) axes.nu = {1.0};
    if (axes.L.empty()) axes.L = {model::length_law::fixed(3)};
    if (axes.delta.empty()) axes.delta = {0.0};
    if (axes.activation.empty()) axes.activation = {model::activation_kind::softmax};
    if (axes.erf_offset.empty()) axes.erf_offset = {0.0};
    if (method.finite_alpha) {
      for (const char* name : {"alpha", "r_k", "r_v"}) {
        const bool needed = std::string_view(name) == "alpha" || method.uses_regularisation;
        if (needed && !given.contains(name))
          fail(entry, std::string("grid axis '") + name + "' is required by finite-alpha method " + method.name +
                          " (set it in [grid] or in this entry's grid)");
      }
      // A finite-α method without an ERM penalty (state evolution) ignores r: one NaN value when
      // absent; given values collapse in expand(), as complete_point clears them.
      if (!method.uses_regularisation)
        for (auto* axis : {&axes.r_k, &axes.r_v})
          if (axis->empty()) axis->push_back(grid::not_set);
    } else {
      // Population-level methods ignore α and r: one NaN value (complete_point clears them anyway).
      for (auto* axis : {&axes.alpha, &axes.r_k, &axes.r_v})
        if (axis->empty()) axis->push_back(grid::not_set);
    }
    for (const auto& group : axes.zip) {
      for (const auto& name : group)
        if (!given.contains(name))
          fail(zip_field, "zip names axis '" + name + "' which is not given explicitly for " + entry, zip_node);
      const std::size_t n = axis_length(axes, group.front());
      for (const auto& name : group)
        if (axis_length(axes, name) != n)
          fail(zip_field,
               "zipped axes must have equal lengths, but " + group.front() + " has " + std::to_string(n) + " and " +
                   name + " has " + std::to_string(axis_length(axes, name)) + " values (for " + entry + ")",
               zip_node);
    }
    return axes;
  }

  // ---- methods ------------------------------------------------------------------------------
  std::string option_value_text(const methods::option_spec& spec, const toml::node& node, const std::string& field) const {
    using vt = methods::option_spec::value_type;
    std::string text;
    if (spec.type == vt::integer || spec.type == vt::real) {
      if (node.is_integer()) text = std::to_string(node.as_integer()->get());
      else if (node.is_floating_point()) text = grid::format_number(node.as_floating_point()->get());
      else fail(field, std::string("expected ") + (spec.type == vt::integer ? "an integer" : "a number") + ", got " +
                           type_name(node), &node);
    } else {
      if (!node.is_string()) fail(field, "expected a string, got " + type_name(node), &node);
      text = node.as_string()->get();
    }
    try {
      return methods::canonical_option(spec, text);
    } catch (const std::invalid_argument& e) {
      std::string reason = e.what();
      const std::string prefix = "option '" + spec.name + "': ";
      if (reason.starts_with(prefix)) reason = reason.substr(prefix.size());
      fail(field, reason, &node);
    }
  }

  std::vector<std::string> option_values(const methods::option_spec& spec, const toml::node& node,
                                         const std::string& field) const {
    std::vector<std::string> values;
    using vt = methods::option_spec::value_type;
    if (const auto* table = node.as_table()) {
      if (spec.type != vt::integer && spec.type != vt::real)
        fail(field, "a linspace/logspace generator needs a numeric option", &node);
      for (double v : generator(*table, field)) {
        try {
          values.push_back(methods::canonical_option(spec, grid::format_number(v)));
        } catch (const std::invalid_argument& e) {
          fail(field, std::string("generated value: ") + e.what(), &node);
        }
      }
      return values;
    }
    if (const auto* arr = node.as_array()) {
      if (arr->empty()) fail(field, "empty option axis (give at least one value)", &node);
      for (std::size_t i = 0; i < arr->size(); ++i)
        values.push_back(option_value_text(spec, (*arr)[i], field + "[" + std::to_string(i + 1) + "]"));
      return values;
    }
    return {option_value_text(spec, node, field)};
  }

  method_entry parse_method(const toml::table& table, const std::string& entry, const grid_table& top) const {
    method_entry result;
    const auto* name = table.get("name");
    if (name == nullptr) fail(entry + ".name", "missing (every [[method]] names a registry method)", &table);
    if (!name->is_string()) fail(entry + ".name", "expected a string, got " + type_name(*name), name);
    result.name = name->as_string()->get();
    const methods::method_descriptor* method = nullptr;
    try {
      method = &methods::find_method(result.name);
    } catch (const std::invalid_argument& e) {
      fail(entry + ".name", e.what(), name);
    }
    const std::string label = entry + " (" + result.name + ")";
    grid_table own;
    bool has_own = false;
    for (auto&& [key, node] : table) {
      const std::string k(key.str());
      const std::string field = entry + "." + k;
      if (k == "name") continue;
      if (k == "grid") {
        if (!node.is_table()) fail(field, "expected a table of axis overrides, got " + type_name(node), &node);
        own = parse_grid(*node.as_table(), field);
        has_own = true;
      } else if (k == "continuation") {
        if (!node.is_string()) fail(field, "expected \"alpha\" or \"none\", got " + type_name(node), &node);
        const auto& c = node.as_string()->get();
        if (c == "alpha") result.continuation = continuation_kind::alpha;
        else if (c != "none") fail(field, "'" + c + "' is not a continuation (expected \"alpha\" or \"none\")", &node);
        if (result.continuation == continuation_kind::alpha && !method->finite_alpha)
          fail(field, "continuation along alpha needs a finite-alpha method; " + result.name + " is population-level",
               &node);
      } else {
        const methods::option_spec* spec = nullptr;
        for (const auto& s : method->options)
          if (s.name == k) spec = &s;
        if (spec == nullptr) {
          std::string known;
          for (const auto& s : method->options) known += (known.empty() ? "" : ", ") + s.name;
          fail(field, "unknown key for method " + result.name + " (expected name, grid, continuation" +
                          (known.empty() ? "" : ", or an option: " + known) + ")",
               &node);
        }
        result.options[k] = option_values(*spec, node, field);
      }
    }
    result.grid = merge(top, has_own ? &own : nullptr, label, *method);
    return result;
  }
};

} // namespace

job_spec parse_job(std::string_view text, std::string source_name) {
  return job_parser(std::move(source_name)).parse(text);
}

job_spec load_job_file(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw job_error(path.string(), "", "is a directory, not a job file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw job_error(path.string(), "", "cannot open the job file for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw job_error(path.string(), "", "error while reading the job file");
  return parse_job(text.str(), path.string());
}

} // namespace slr::job
