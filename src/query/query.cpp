#include "slr/query/query.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "slr/query/filter.hpp"

namespace slr::query {
namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

bool any_value(const column& c) {
  return c.kind != column_kind::number || std::any_of(c.numbers.begin(), c.numbers.end(), [](double x) { return !std::isnan(x); });
}

bool varies(const column& c) {
  for (std::size_t r = 1; r < c.size(); ++r)
    if (!c.same(0, r)) return true;
  return false;
}

// Row indices sorted by the key columns (stable: ties keep table order), and the start of each
// run of equal keys.
struct grouping {
  std::vector<std::size_t> order;
  std::vector<std::size_t> starts; // group g = order[starts[g] .. starts[g+1])
};

grouping group_rows(const table& t, const std::vector<const column*>& keys) {
  grouping g;
  g.order.resize(t.rows());
  std::iota(g.order.begin(), g.order.end(), std::size_t{0});
  std::stable_sort(g.order.begin(), g.order.end(), [&](std::size_t a, std::size_t b) {
    for (const auto* k : keys) {
      if (k->less(a, b)) return true;
      if (k->less(b, a)) return false;
    }
    return false;
  });
  for (std::size_t i = 0; i < g.order.size(); ++i) {
    const bool same = i > 0 && std::all_of(keys.begin(), keys.end(), [&](const column* k) {
                        return k->same(g.order[i - 1], g.order[i]);
                      });
    if (!same) g.starts.push_back(i);
  }
  g.starts.push_back(g.order.size());
  return g;
}

std::vector<std::string> expand_keys(const table& t, const std::vector<std::string>& keys, const char* argument) {
  std::vector<std::string> out;
  for (const auto& k : keys) {
    if (k == "parameters") {
      if (t.find("archive") != nullptr && !contains(out, "archive")) out.push_back("archive"); // rows of several archives
      for (const auto& p : t.parameter_names())
        if (p != "repeat" && t.find(p) != nullptr && !contains(out, p)) out.push_back(p);
      continue;
    }
    (void)t.at(k, argument);
    if (contains(out, k)) throw std::invalid_argument(std::string(argument) + ": column '" + k + "' given twice");
    out.push_back(k);
  }
  return out;
}

double statistic(const std::string& name, std::vector<double>& values) {
  const auto n = static_cast<double>(values.size());
  if (name == "count") return n;
  if (values.empty()) return std::nan("");
  if (name == "min") return *std::min_element(values.begin(), values.end());
  if (name == "max") return *std::max_element(values.begin(), values.end());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  if (name == "mean") return mean;
  if (values.size() < 2) return std::nan("");
  double squares = 0;
  for (const double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / (n - 1)); // std
}

} // namespace

const std::vector<std::string>& statistic_names() {
  static const std::vector<std::string> names = {"mean", "std", "min", "max", "count"};
  return names;
}

table group_by(const table& points, const group_by_options& options) {
  const auto keys = expand_keys(points, options.keys, "--group-by");
  if (keys.empty()) throw std::invalid_argument("--group-by: no columns given");
  std::vector<std::string> statistics = options.statistics;
  if (statistics.empty()) statistics = {"mean", "std", "min", "max"};
  for (const auto& s : statistics)
    if (!contains(statistic_names(), s))
      throw std::invalid_argument("--stats: unknown statistic '" + s + "' (expected " + joined(statistic_names()) + ")");
  std::vector<std::string> values;
  if (options.values.empty()) {
    for (const auto& c : points.columns)
      if (c.is_result && any_value(c) && !contains(keys, c.name)) values.push_back(c.name);
  } else {
    for (const auto& v : options.values) {
      const auto& c = points.at(v, "--columns");
      if (contains(keys, v) || contains(values, v)) continue;
      if (c.kind != column_kind::number)
        throw std::invalid_argument("--columns: '" + v + "' is not numeric and cannot be aggregated by --group-by "
                                    "(make it a --group-by key or leave it out)");
      values.push_back(v);
    }
  }

  std::vector<const column*> key_columns;
  for (const auto& k : keys) key_columns.push_back(&points.at(k, "--group-by"));
  const auto g = group_rows(points, key_columns);
  const std::size_t groups = g.starts.size() - 1;

  std::vector<std::size_t> first_rows;
  for (std::size_t i = 0; i < groups; ++i) first_rows.push_back(g.order[g.starts[i]]);
  table out = points.select(keys, "--group-by").take(first_rows);
  auto count = column::make("count", column_kind::number);
  for (std::size_t i = 0; i < groups; ++i) count.numbers.push_back(static_cast<double>(g.starts[i + 1] - g.starts[i]));
  out.columns.push_back(std::move(count));
  for (const auto& v : values) {
    const auto& source = points.at(v, "--columns");
    std::vector<column> stats;
    for (const auto& s : statistics) {
      auto c = column::make(v + "_" + s, column_kind::number);
      c.is_result = source.is_result;
      stats.push_back(std::move(c));
    }
    for (std::size_t i = 0; i < groups; ++i) {
      std::vector<double> finite;
      for (std::size_t j = g.starts[i]; j < g.starts[i + 1]; ++j)
        if (!std::isnan(source.numbers[g.order[j]])) finite.push_back(source.numbers[g.order[j]]);
      for (std::size_t s = 0; s < statistics.size(); ++s) stats[s].numbers.push_back(statistic(statistics[s], finite));
    }
    for (auto& c : stats) out.columns.push_back(std::move(c));
  }
  return out;
}

min_over_result min_over(const table& points, const std::vector<std::string>& over,
                         const std::vector<std::string>& keys, const std::string& objective_name) {
  if (over.empty()) throw std::invalid_argument("--min-over: no columns given");
  for (const auto& o : over) {
    (void)points.at(o, "--min-over");
    if (!contains(keys, o))
      throw std::invalid_argument("--min-over: '" + o + "' is not a key column (keys: " + joined(keys) + ")");
  }
  const column* primary = nullptr;
  const column* fallback = nullptr;
  if (!objective_name.empty()) {
    // A chosen column (e.g. test_clean of tied attention, which has no test_risk), or its mean.
    primary = points.find(objective_name);
    if (primary == nullptr) primary = points.find(objective_name + "_mean");
    if (primary == nullptr || primary->kind != column_kind::number || primary->is_parameter)
      throw std::invalid_argument("--minimise: '" + objective_name + "' is not a numeric result column of the rows "
                                  "(nor '" + objective_name + "_mean' after --group-by)");
  } else {
    // The risk to minimise: test risk if present (finite-α methods), else the population risk.
    primary = points.find("test_risk");
    fallback = points.find("risk");
    if (primary == nullptr && fallback == nullptr) {
      primary = points.find("test_risk_mean");
      fallback = points.find("risk_mean");
    }
    if (primary == nullptr && fallback == nullptr)
      throw std::invalid_argument("--min-over: the table has no test_risk or risk column (nor test_risk_mean/"
                                  "risk_mean after --group-by) to minimise; name one with --minimise");
  }
  const auto objective = [&](std::size_t r) {
    if (primary != nullptr && std::isfinite(primary->numbers[r])) return primary->numbers[r];
    if (fallback != nullptr && std::isfinite(fallback->numbers[r])) return fallback->numbers[r];
    return std::nan("");
  };

  min_over_result result;
  std::vector<const column*> remaining;
  for (const auto& k : keys)
    if (!contains(over, k)) {
      result.keys.push_back(k);
      remaining.push_back(&points.at(k, "--min-over"));
    }
  const auto g = group_rows(points, remaining);
  std::vector<std::size_t> winners;
  for (std::size_t i = 0; i + 1 < g.starts.size(); ++i) {
    std::size_t best = 0;
    double best_risk = std::nan("");
    for (std::size_t j = g.starts[i]; j < g.starts[i + 1]; ++j) {
      const double risk = objective(g.order[j]);
      if (!std::isnan(risk) && (std::isnan(best_risk) || risk < best_risk)) {
        best_risk = risk;
        best = g.order[j];
      }
    }
    if (std::isnan(best_risk)) ++result.groups_without_risk;
    else winners.push_back(best);
  }
  result.rows = points.take(winners);
  return result;
}

query_result run_query(const table& points, const query_options& options) {
  table t = filter_status(filter(points, options.where), options.statuses);
  const bool all_columns = options.columns.size() == 1 && options.columns.front() == "all";
  std::vector<std::string> keys;
  // With --group-by, --columns may name aggregates (count, test_risk_mean, …): then exactly the keys
  // and those columns come out, their sources aggregated. A plain column name stands for its
  // statistics (and the count comes with them, as without aggregate names).
  std::vector<std::string> aggregate_selection, aggregate_sources, aggregate_statistics = options.statistics;
  if (!options.group_by.empty() && !options.columns.empty() && !all_columns) {
    const auto keys_here = expand_keys(t, options.group_by, "--group-by");
    const std::vector<std::string> defaults = {"mean", "std", "min", "max"};
    if (aggregate_statistics.empty()) aggregate_statistics = defaults;
    bool aggregates = false;
    for (const auto& c : options.columns) {
      if (contains(keys_here, c)) continue;
      if (c == "count") {
        aggregates = true;
        continue;
      }
      if (t.find(c) != nullptr) {
        if (!contains(aggregate_sources, c)) aggregate_sources.push_back(c);
        continue;
      }
      std::string source, statistic;
      for (const auto& stat : statistic_names()) {
        const std::string suffix = "_" + stat;
        if (c.size() > suffix.size() && c.ends_with(suffix) && t.find(c.substr(0, c.size() - suffix.size())) != nullptr)
          source = c.substr(0, c.size() - suffix.size()), statistic = stat;
      }
      if (source.empty()) {
        aggregate_sources.push_back(c); // unknown: group_by names it
        continue;
      }
      aggregates = true;
      if (!contains(aggregate_sources, source)) aggregate_sources.push_back(source);
      if (!contains(aggregate_statistics, statistic)) {
        if (!options.statistics.empty())
          throw std::invalid_argument("--columns: '" + c + "' needs the statistic " + statistic +
                                      ", which --stats leaves out");
        aggregate_statistics.push_back(statistic);
      }
    }
    if (aggregates) {
      aggregate_selection = keys_here;
      for (const auto& c : options.columns) {
        if (contains(aggregate_selection, c)) continue;
        if (c != "count" && t.find(c) != nullptr) {
          for (const auto& stat : options.statistics.empty() ? defaults : options.statistics)
            aggregate_selection.push_back(c + "_" + stat);
        } else {
          aggregate_selection.push_back(c);
        }
      }
    }
  }
  if (!options.group_by.empty()) {
    group_by_options g;
    g.keys = options.group_by;
    g.statistics = aggregate_selection.empty() ? options.statistics : aggregate_statistics;
    if (!aggregate_selection.empty()) {
      g.values = aggregate_sources;
      if (!options.min_over.empty()) {
        const std::string objective = options.minimise.empty() ? "test_risk" : options.minimise;
        for (const auto& risk : options.minimise.empty() ? std::vector<std::string>{"test_risk", "risk"}
                                                          : std::vector<std::string>{objective})
          if (t.find(risk) != nullptr && !contains(g.values, risk)) g.values.push_back(risk);
        if (!contains(g.statistics, std::string("mean"))) g.statistics.emplace_back("mean");
      }
    } else if (!options.columns.empty() && !all_columns) {
      g.values = options.columns;
      if (!options.min_over.empty()) {
        if (!options.minimise.empty()) {
          if (!contains(g.values, options.minimise)) g.values.push_back(options.minimise);
        } else {
          for (const char* risk : {"test_risk", "risk"})
            if (t.find(risk) != nullptr) g.values.emplace_back(risk);
        }
      }
    } else if (all_columns) {
      for (const auto& c : t.columns)
        if (c.kind == column_kind::number && !c.is_parameter) g.values.push_back(c.name);
    }
    keys = expand_keys(t, options.group_by, "--group-by");
    t = group_by(t, g);
  } else {
    if (!options.statistics.empty()) throw std::invalid_argument("--stats: only used with --group-by");
    for (const auto& p : t.parameter_names()) keys.push_back(p);
  }

  query_result result;
  if (!options.minimise.empty() && options.min_over.empty())
    throw std::invalid_argument("--minimise: only used with --min-over");
  if (!options.min_over.empty()) {
    auto m = min_over(t, options.min_over, keys, options.minimise);
    t = std::move(m.rows);
    result.groups_without_risk = m.groups_without_risk;
  }

  if (!aggregate_selection.empty()) {
    result.rows = t.select(aggregate_selection, "--columns");
    return result;
  }
  if (!options.group_by.empty() || all_columns) {
    result.rows = std::move(t);
    return result;
  }
  std::vector<std::string> selected;
  if (!options.columns.empty()) {
    selected = options.columns; // exactly what was asked for, --min-over or not
  } else {
    if (const auto* tag = t.find("archive"); tag != nullptr && varies(*tag)) selected.emplace_back("archive");
    selected.emplace_back("method");
    const bool has_pmf = t.has_length_pmf();
    for (const auto& p : t.parameter_names()) {
      const auto* c = t.find(p);
      if (p == "method" || c == nullptr) continue;
      if ((p == "L" && has_pmf) || (p == "L_pmf" && !has_pmf)) continue;
      if (options.every_parameter || varies(*c) || contains(options.min_over, p)) selected.push_back(p);
    }
    selected.emplace_back("status");
    static const std::vector<std::string> headline = {"risk", "risk_stderr", "test_risk", "test_risk_stderr",
                                                      "train_loss", "bayes_risk", "alpha_jump", "alpha_jump_stderr"};
    const bool every_result = options.wide || options.every_parameter;
    for (const auto& c : t.columns)
      if (c.is_result && any_value(c) && (every_result || contains(headline, c.name))) selected.push_back(c.name);
  }
  result.rows = t.select(selected, "--columns");
  return result;
}

} // namespace slr::query
