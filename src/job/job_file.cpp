#include "slr/job/job_file.hpp"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "slr/grid/point.hpp"
#include "slr/grid/suggest.hpp"
#include "slr/methods/registry.hpp"

namespace slr::job {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

// The line that opens the [shard] table shard_text() appends.
constexpr std::string_view shard_marker = "# slr-sweep shard: this archive holds the part of the job above listed below";

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

// A [grid] table (top-level or per method): the parameters it sets, its zip groups and repeats.
struct grid_table {
  grid_axes axes;
  std::map<std::string, const toml::node*> where; // parameter → its node (for messages)
  bool zip_given = false;
  bool repeats_given = false;
  const toml::node* zip_node = nullptr;
};

std::string parameter_list(const std::vector<const grid::parameter_spec*>& specs) {
  std::string list;
  for (const auto* spec : specs) list += (list.empty() ? "" : ", ") + spec->name;
  return list;
}

std::vector<std::string> names_of(const std::vector<const grid::parameter_spec*>& specs) {
  std::vector<std::string> names;
  for (const auto* spec : specs) names.push_back(spec->name);
  return names;
}

std::vector<const grid::parameter_spec*> every_parameter() {
  std::vector<const grid::parameter_spec*> specs;
  std::set<std::string> seen;
  for (const auto& model : methods::all_models())
    for (const auto& spec : model.parameters)
      if (seen.insert(spec.name).second) specs.push_back(&spec);
  for (const auto& m : methods::all_methods())
    if (m.listed)
      for (const auto& spec : m.options)
        if (seen.insert(spec.name).second) specs.push_back(&spec);
  return specs;
}

std::string all_parameter_names() { return parameter_list(every_parameter()); }

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
      if (k != "name" && k != "seed" && k != "description" && k != "model" && k != "grid" && k != "method" &&
          k != "shard")
        fail(k,
             "unknown key" + grid::did_you_mean(k, {"name", "seed", "description", "model", "grid", "method", "shard"}) +
                 " (expected name, seed, description, model, grid, [[method]])",
             &node);
    }
    if (const auto* shard = root.get("shard")) job.shard = parse_shard(text, *shard);

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

    if (const auto* model = root.get("model")) {
      if (!model->is_string()) fail("model", "expected a string, got " + type_name(*model), model);
      model_ = model->as_string()->get();
      try {
        (void)methods::find_model(model_);
      } catch (const std::invalid_argument& e) {
        fail("model", e.what(), model);
      }
    }

    grid_table top;
    if (const auto* grid = root.get("grid")) {
      if (!grid->is_table()) fail("grid", "expected a table, got " + type_name(*grid), grid);
      top = parse_grid(*grid->as_table(), "grid", nullptr);
    }

    const auto* methods = root.get("method");
    if (methods == nullptr) fail("method", "missing: at least one [[method]] entry is required");
    if (!methods->is_array_of_tables())
      fail("method", "expected an array of tables ([[method]] entries), got " + type_name(*methods), methods);
    const auto& array = *methods->as_array();
    if (array.empty()) fail("method", "at least one [[method]] entry is required", methods);
    std::set<std::string> used;
    std::set<std::string> models;
    for (std::size_t i = 0; i < array.size(); ++i) {
      job.methods.push_back(parse_method(*array[i].as_table(), "method[" + std::to_string(i + 1) + "]", top));
      const auto& method = methods::find_method(job.methods.back().model, job.methods.back().name);
      for (const auto* spec : methods::method_parameters(method)) used.insert(spec->name);
      models.insert(method.model);
    }
    // A [grid] parameter that no method of the job takes is a mistake (a typo, a wrong method);
    // a parameter of an entry's model collapses for the methods that do not use it.
    const auto of_a_model = [&](const std::string& parameter) {
      for (const auto& model : models)
        if (methods::find_model(model).find(parameter) != nullptr) return true;
      return false;
    };
    for (const auto& [parameter, node] : top.where)
      if (!used.contains(parameter) && !of_a_model(parameter))
        fail("grid." + parameter, "no method of this job takes parameter '" + parameter + "'", node);
    return job;
  }

private:
  // The trailing [shard] table that `run --shard` writes (shard_text): index, count and the
  // sorted, distinct first point ids of the shard's units; only after the marker line, so that
  // whole_job_text() recovers the job without it.
  shard_spec parse_shard(std::string_view text, const toml::node& node) const {
    if (!node.is_table()) fail("shard", "expected a table, got " + type_name(node), &node);
    const auto& table = *node.as_table();
    if (whole_job_text(std::string(text)).size() == text.size())
      fail("shard", "is written by `slr-sweep run --shard i/n` only (after the line '" + std::string(shard_marker) +
                        "'); remove it from the job file", &node);
    for (auto&& [key, value] : table) {
      const std::string k(key.str());
      if (k != "index" && k != "count" && k != "units") fail("shard." + k, "unknown key (expected index, count, units)", &value);
    }
    shard_spec shard;
    const auto integer = [&](const char* key, std::int64_t low) {
      const auto* v = table.get(key);
      if (v == nullptr) fail(std::string("shard.") + key, "missing");
      if (!v->is_integer() || v->as_integer()->get() < low)
        fail(std::string("shard.") + key, "expected an integer >= " + std::to_string(low), v);
      return v->as_integer()->get();
    };
    const auto count = integer("count", 1);
    const auto index = integer("index", 0);
    if (index >= count) fail("shard.index", "must be < shard.count (" + std::to_string(count) + ")", table.get("index"));
    shard.index = static_cast<std::uint32_t>(index);
    shard.count = static_cast<std::uint32_t>(count);
    const auto* units = table.get("units");
    if (units == nullptr || !units->is_array()) fail("shard.units", "expected an array of point ids", units);
    for (const auto& id : *units->as_array()) {
      const auto* t = id.as_string();
      std::uint64_t value = 0;
      if (t == nullptr || t->get().size() != 16 ||
          std::sscanf(t->get().c_str(), "%16" SCNx64, &value) != 1 ||
          !std::all_of(t->get().begin(), t->get().end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }))
        fail("shard.units", "expected point ids of 16 hex digits", &id);
      if (!shard.units.empty() && value <= shard.units.back())
        fail("shard.units", "point ids must be sorted and distinct", &id);
      shard.units.push_back(value);
    }
    return shard;
  }

  std::string source_;
  std::string model_ = "slr"; // the job's default model (top-level `model`)

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

  // ---- values of one declared parameter ------------------------------------------------------
  // The canonical text of one TOML value of a parameter.
  std::string one_value(const grid::parameter_spec& spec, const toml::node& node, const std::string& field) const {
    using vt = grid::value_type;
    std::string text;
    switch (spec.type) {
    case vt::integer:
    case vt::real:
      if (node.is_integer()) text = std::to_string(node.as_integer()->get());
      else if (node.is_floating_point() || (node.is_string() && spec.allow_infinity))
        text = grid::format_number(number(node, field, spec.allow_infinity));
      else
        fail(field, std::string("expected ") + (spec.type == vt::integer ? "an integer" : "a number") +
                        (spec.allow_infinity ? " or \"inf\"" : "") + ", got " + type_name(node),
             &node);
      break;
    case vt::length:
      if (node.is_integer()) {
        text = std::to_string(node.as_integer()->get());
      } else if (node.is_string()) {
        text = node.as_string()->get();
      } else if (const auto* table = node.as_table()) {
        if (table->empty()) fail(field, "empty pmf table", &node);
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
          text += (text.empty() ? "" : ",") + k + ":" + grid::format_number(number(value, field + "." + k, false));
        }
      } else {
        fail(field, "expected an integer L >= 1, a pmf table {1 = 0.25, 3 = 0.75} or text \"1:0.25,3:0.75\", got " +
                        type_name(node),
             &node);
      }
      break;
    case vt::choice:
    case vt::text:
      if (!node.is_string()) fail(field, "expected a string, got " + type_name(node), &node);
      text = node.as_string()->get();
      break;
    }
    try {
      return grid::canonical_value(spec, text);
    } catch (const std::invalid_argument& e) {
      if (spec.type == vt::choice) fail(field, "unknown " + spec.name + " '" + text + "' (" + e.what() + ")", &node);
      fail(field, e.what(), &node);
    }
  }

  // A value, a list of values or a generator {linspace = [a, b, n]} / {logspace = [a, b, n]}.
  std::vector<std::string> values(const grid::parameter_spec& spec, const toml::node& node,
                                  const std::string& field) const {
    using vt = grid::value_type;
    std::vector<std::string> out;
    if (const auto* table = node.as_table()) {
      const bool is_generator = table->contains("linspace") || table->contains("logspace");
      if (!is_generator && spec.type == vt::length) return {one_value(spec, node, field)};
      if (spec.type != vt::integer && spec.type != vt::real && spec.type != vt::length)
        fail(field, "a linspace/logspace generator needs a numeric parameter; " + spec.name + " is " +
                        std::string(grid::type_name(spec.type)),
             &node);
      for (double v : generator(*table, field)) {
        try {
          // A length is written as an integer ("100000", not the shortest double text "1e+05").
          const bool integral = spec.type == vt::length && v == std::floor(v) && std::fabs(v) < 1e15;
          out.push_back(grid::canonical_value(
              spec, integral ? std::to_string(static_cast<long long>(v)) : grid::format_number(v)));
        } catch (const std::invalid_argument& e) {
          fail(field, "generated value " + grid::format_number(v) + ": " + e.what(), &node);
        }
      }
      return out;
    }
    if (const auto* arr = node.as_array()) {
      if (arr->empty()) fail(field, "empty axis (give at least one value)", &node);
      for (std::size_t i = 0; i < arr->size(); ++i)
        out.push_back(one_value(spec, (*arr)[i], field + "[" + std::to_string(i + 1) + "]"));
      return out;
    }
    return {one_value(spec, node, field)};
  }

  // ---- grid ---------------------------------------------------------------------------------
  // A [grid] table; `method` restricts the keys to its parameters (a per-method grid), null for
  // the top-level table, which may set any declared parameter.
  grid_table parse_grid(const toml::table& table, const std::string& prefix,
                        const methods::method_descriptor* method) const {
    grid_table g;
    for (auto&& [key, node] : table) {
      const std::string k(key.str());
      const std::string field = prefix + "." + k;
      if (k == "repeats") {
        if (!node.is_integer()) fail(field, "expected an integer >= 1, got " + type_name(node), &node);
        const auto r = node.as_integer()->get();
        if (r < 1 || r > 1'000'000) fail(field, "must be in [1, 1000000], got " + std::to_string(r), &node);
        g.axes.repeats = static_cast<std::uint32_t>(r);
        g.repeats_given = true;
      } else if (k == "zip") {
        g.zip_given = true;
        g.zip_node = &node;
        const auto* groups = node.as_array();
        if (groups == nullptr) fail(field, "expected an array of arrays of parameter names", &node);
        std::set<std::string> used;
        for (std::size_t i = 0; i < groups->size(); ++i) {
          const std::string gfield = field + "[" + std::to_string(i + 1) + "]";
          const auto* group = (*groups)[i].as_array();
          if (group == nullptr) fail(gfield, "expected an array of parameter names", &(*groups)[i]);
          std::vector<std::string> names;
          for (const auto& member : *group) {
            if (!member.is_string()) fail(gfield, "expected parameter names (strings)", &member);
            names.push_back(member.as_string()->get());
          }
          if (names.size() < 2) fail(gfield, "a zip group names at least two parameters", &(*groups)[i]);
          for (const auto& name : names) {
            if (spec_for(name, method) == nullptr)
              fail(gfield,
                   "'" + name + "' is not a parameter" + (method ? " of method " + method->name : "") +
                       grid::did_you_mean(name, known_name_list(method)) + " (known: " + known_names(method) + ")",
                   &(*groups)[i]);
            if (!used.insert(name).second)
              fail(gfield, "parameter '" + name + "' appears in two zip groups", &(*groups)[i]);
          }
          g.axes.zip.push_back(names);
        }
      } else if (const auto* spec = spec_for(k, method)) {
        g.axes.values[k] = values(*spec, node, field);
        g.where[k] = &node;
      } else {
        auto candidates = known_name_list(method);
        candidates.insert(candidates.end(), {"zip", "repeats"});
        fail(field,
             "unknown grid key" + grid::did_you_mean(k, candidates) + " (expected a parameter" +
                 (method ? " of method " + method->name : "") + ": " + known_names(method) + "; or zip, repeats)",
             &node);
      }
    }
    return g;
  }

  static const grid::parameter_spec* spec_for(const std::string& name, const methods::method_descriptor* method) {
    if (method == nullptr) return methods::find_parameter(name);
    for (const auto* spec : methods::method_parameters(*method))
      if (spec->name == name) return spec;
    // A parameter of the method's model that it does not use (α of a population-level method) is
    // accepted and collapses: one job may set it for all its entries.
    for (const auto& spec : methods::model_of(*method).parameters)
      if (spec.name == name) return &spec;
    return nullptr;
  }

  static std::vector<std::string> known_name_list(const methods::method_descriptor* method) {
    return names_of(method ? methods::method_parameters(*method) : every_parameter());
  }

  static std::string known_names(const methods::method_descriptor* method) {
    return method ? parameter_list(methods::method_parameters(*method)) : all_parameter_names();
  }

  // The entry's parameters: the top-level grid's (those the method takes), replaced by the
  // entry's grid table and its direct keys; then required parameters and zips are checked.
  grid_axes merge(const grid_table& top, const grid_table& own, const std::string& entry,
                  const methods::method_descriptor& method) const {
    grid_axes axes;
    std::set<std::string> takes;
    for (const auto* spec : methods::method_parameters(method)) takes.insert(spec->name);
    for (const auto& [name, list] : top.axes.values)
      if (takes.contains(name)) axes.values[name] = list;
    for (const auto& [name, list] : own.axes.values)
      if (takes.contains(name)) axes.values[name] = list;
    axes.repeats = own.repeats_given ? own.axes.repeats : top.axes.repeats;
    const toml::node* zip_node = own.zip_given ? own.zip_node : top.zip_node;
    const std::string zip_field = own.zip_given ? entry + ".grid.zip" : "grid.zip";
    for (const auto& group : own.zip_given ? own.axes.zip : top.axes.zip) {
      // Members the method does not take collapse (e.g. alpha for a population-level method).
      std::vector<std::string> kept;
      for (const auto& name : group)
        if (takes.contains(name)) kept.push_back(name);
      if (kept.size() >= 2) axes.zip.push_back(std::move(kept));
    }
    for (const auto& spec : methods::model_of(method).parameters)
      if (spec.default_value.empty() && methods::uses_model_parameter(method, spec.name) &&
          !axes.values.contains(spec.name))
        fail(entry, "parameter '" + spec.name + "' is required by " + (method.finite_alpha ? "finite-alpha " : "") +
                        "method " + method.name + " (set it in [grid] or in this entry)");
    for (const auto& group : axes.zip) {
      for (const auto& name : group)
        if (!axes.values.contains(name))
          fail(zip_field, "zip names parameter '" + name + "' which is not given explicitly for " + entry, zip_node);
      const std::size_t n = axes.values.at(group.front()).size();
      for (const auto& name : group)
        if (axes.values.at(name).size() != n)
          fail(zip_field,
               "zipped parameters must have equal lengths, but " + group.front() + " has " + std::to_string(n) +
                   " and " + name + " has " + std::to_string(axes.values.at(name).size()) + " values (for " + entry +
                   ")",
               zip_node);
    }
    return axes;
  }

  // ---- methods ------------------------------------------------------------------------------
  method_entry parse_method(const toml::table& table, const std::string& entry, const grid_table& top) const {
    method_entry result;
    const auto* name = table.get("name");
    if (name == nullptr) fail(entry + ".name", "missing (every [[method]] names a registry method)", &table);
    if (!name->is_string()) fail(entry + ".name", "expected a string, got " + type_name(*name), name);
    result.name = name->as_string()->get();
    result.model = model_;
    if (const auto* model = table.get("model")) {
      if (!model->is_string()) fail(entry + ".model", "expected a string, got " + type_name(*model), model);
      result.model = model->as_string()->get();
      try {
        (void)methods::find_model(result.model);
      } catch (const std::invalid_argument& e) {
        fail(entry + ".model", e.what(), model);
      }
    }
    const methods::method_descriptor* method = nullptr;
    try {
      method = &methods::find_method(result.model, result.name);
    } catch (const std::invalid_argument& e) {
      fail(entry + ".name", e.what(), name);
    }
    const std::string label = entry + " (" + result.name + ")";
    grid_table own;
    for (auto&& [key, node] : table) {
      const std::string k(key.str());
      const std::string field = entry + "." + k;
      if (k == "name" || k == "model") continue;
      if (k == "grid") {
        if (!node.is_table()) fail(field, "expected a table of parameters, got " + type_name(node), &node);
        auto own_grid = parse_grid(*node.as_table(), field, method);
        for (auto& [parameter, list] : own_grid.axes.values) {
          if (own.axes.values.contains(parameter))
            fail(field + "." + parameter, "parameter '" + parameter + "' is given twice in this entry", &node);
          own.axes.values[parameter] = std::move(list);
        }
        own.zip_given = own_grid.zip_given;
        own.zip_node = own_grid.zip_node;
        own.axes.zip = std::move(own_grid.axes.zip);
        own.repeats_given = own_grid.repeats_given;
        own.axes.repeats = own_grid.axes.repeats;
      } else if (k == "continuation") {
        if (!node.is_string()) fail(field, "expected \"alpha\" or \"none\", got " + type_name(node), &node);
        const auto& c = node.as_string()->get();
        if (c == "alpha") result.continuation = continuation_kind::alpha;
        else if (c != "none") fail(field, "'" + c + "' is not a continuation (expected \"alpha\" or \"none\")", &node);
        if (result.continuation == continuation_kind::alpha && !method->finite_alpha)
          fail(field, "continuation along alpha needs a finite-alpha method; " + result.name + " is population-level",
               &node);
      } else if (const auto* spec = spec_for(k, method)) {
        if (own.axes.values.contains(k))
          fail(field, "parameter '" + k + "' is given twice in this entry", &node);
        own.axes.values[k] = values(*spec, node, field);
      } else {
        auto candidates = names_of(methods::method_parameters(*method));
        candidates.insert(candidates.begin(), {"name", "grid", "continuation"});
        fail(field,
             "unknown key for method " + result.name + grid::did_you_mean(k, candidates) +
                 " (expected name, grid, continuation, or a parameter: " + known_names(method) + ")",
             &node);
      }
    }
    result.grid = merge(top, own, label, *method);
    return result;
  }
};

} // namespace

std::string shard_text(const std::string& text, const shard_spec& shard) {
  std::string out = whole_job_text(text);
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += "\n";
  out += shard_marker;
  out += "\n[shard]\nindex = " + std::to_string(shard.index) + "\ncount = " + std::to_string(shard.count) + "\nunits = [\n";
  for (const auto id : shard.units) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016" PRIx64, id);
    out += "  \"" + std::string(hex) + "\",\n";
  }
  out += "]\n";
  return out;
}

std::string whole_job_text(const std::string& text) {
  const auto at = text.rfind("\n" + std::string(shard_marker) + "\n");
  if (at == std::string::npos) return text;
  // shard_text() separated the table from the job by one empty line.
  return text.substr(0, at > 0 && text[at - 1] == '\n' ? at - 1 : at) + "\n";
}

job_spec parse_job(std::string_view text, std::string source_name) {
  return job_parser(std::move(source_name)).parse(text);
}

job_spec load_job_file(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw job_error(path.string(), "", "is a directory, not a job file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw job_error(path.string(), "", "cannot open the job file for reading");
  // A job file is a few kB; a device or a pipe that never ends (/dev/zero) is read no further
  // than this.
  constexpr std::size_t max_bytes = 16u << 20;
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw job_error(path.string(), "", "error while reading the job file");
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > max_bytes)
    throw job_error(path.string(), "", "is larger than 16 MiB: not a job file (a job file is a few kB of TOML)");
  return parse_job(text, path.string());
}

} // namespace slr::job
