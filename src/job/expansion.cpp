#include "slr/job/expansion.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "slr/model/random.hpp"
#include "slr/methods/registry.hpp"

namespace slr::job {

grid::work_unit sweep_unit::work_unit() const {
  grid::work_unit unit;
  unit.points.reserve(points.size());
  for (const auto& p : points) unit.points.push_back(p.point);
  return unit;
}

std::uint64_t point_id(const grid::point& point, std::uint32_t repeat, bool chained) {
  if (repeat == 0 && !chained) return point.identity();
  std::string text = point.canonical();
  if (repeat != 0) text += ";repeat=" + std::to_string(repeat);
  if (chained) text += ";continuation=alpha";
  return model::stable_hash(text);
}

namespace {

// One dimension of the product: the parameters iterated together (a zip group or a single one).
struct dimension {
  std::vector<std::string> parameters;
  std::size_t size = 0;
};

// The dimensions of an entry, outermost first: model parameters in the model's order, then
// method options by name (the order of every release so far); a zip group sits where its first
// member would.
std::vector<dimension> dimensions(const method_entry& entry) {
  const auto& g = entry.grid;
  std::vector<std::string> order;
  for (const auto& spec : methods::model_of(methods::find_method(entry.model, entry.name)).parameters)
    if (g.values.contains(spec.name)) order.push_back(spec.name);
  for (const auto& [name, values] : g.values)
    if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
  std::vector<dimension> dims;
  std::set<std::string> placed;
  for (const auto& name : order) {
    if (placed.contains(name)) continue;
    dimension d{{name}, g.values.at(name).size()};
    for (const auto& group : g.zip)
      if (std::find(group.begin(), group.end(), name) != group.end()) d.parameters = group;
    for (const auto& member : d.parameters) placed.insert(member);
    dims.push_back(std::move(d));
  }
  return dims;
}

// The identity a point's seed derives from: the point's own, or that of the same point without
// the parameters that share seeds — α for a point that asks for common samples along α
// ("common-samples" = "alpha": every α of a curve draws the same Monte Carlo samples), and every
// declared parameter with paired_seed (the label form of tied attention: both forms train on the
// same teacher and sequences).
std::uint64_t seed_identity(const grid::point& point, std::uint32_t repeat, std::uint64_t id, bool chained) {
  grid::point shared = point;
  bool changed = false;
  if (const auto it = point.options.find("common-samples"); it != point.options.end() && it->second == "alpha") {
    shared.alpha = grid::not_set;
    chained = false;
    changed = true;
  }
  if (!point.model.empty())
    for (const auto& spec : methods::find_model(point.model).parameters)
      if (spec.paired_seed && shared.options.erase(spec.name) > 0) changed = true;
  return changed ? point_id(shared, repeat, chained) : id;
}

std::string hex16(std::uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

// Builds every completed point of one method entry in product order (repeats innermost).
std::vector<std::pair<grid::point, std::uint32_t>> entry_points(const job_spec& job, const method_entry& entry,
                                                               const std::string& label) {
  const auto& g = entry.grid;
  const auto& method = methods::find_method(entry.model, entry.name);
  const auto dims = dimensions(entry);
  std::vector<std::pair<grid::point, std::uint32_t>> out;
  std::vector<std::size_t> index(dims.size(), 0);
  for (const auto& d : dims)
    if (d.size == 0) return out;
  while (true) {
    std::map<std::string, std::string> values;
    for (std::size_t k = 0; k < dims.size(); ++k)
      for (const auto& name : dims[k].parameters) values[name] = g.values.at(name)[index[k]];
    grid::point p;
    try {
      p = methods::make_point(method, values);
    } catch (const methods::parameter_error& e) {
      throw job_error(job.source_name, "grid." + e.parameter(),
                      std::string(e.what()) + " for " + label +
                          " (use a per-method grid or zip to pair the values that go together)");
    } catch (const std::invalid_argument& e) {
      throw job_error(job.source_name, label, std::string("invalid point: ") + e.what());
    }
    for (std::uint32_t r = 0; r < g.repeats; ++r) out.emplace_back(p, r);
    std::size_t k = index.size();
    while (k > 0) {
      --k;
      if (++index[k] < dims[k].size) break;
      index[k] = 0;
      if (k == 0) return out;
    }
    if (index.empty()) return out;
  }
}

} // namespace

std::uint64_t product_point_count(const job_spec& job) {
  constexpr auto saturated = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t total = 0;
  for (const auto& entry : job.methods) {
    std::uint64_t product = entry.grid.repeats;
    const auto times = [&](std::uint64_t n) {
      if (product != saturated && __builtin_mul_overflow(product, n, &product)) product = saturated;
      if (n == 0) product = 0;
    };
    for (const auto& d : dimensions(entry)) times(d.size);
    if (__builtin_add_overflow(total, product, &total)) return saturated;
  }
  return total;
}

std::vector<sweep_unit> expand(const job_spec& job, std::uint64_t max_points) {
  auto units = expand_whole_job(job, max_points);
  if (!job.shard) return units;
  std::unordered_map<std::uint64_t, std::size_t> first_ids;
  for (std::size_t u = 0; u < units.size(); ++u) first_ids.emplace(units[u].points.front().id, u);
  std::vector<bool> chosen(units.size(), false);
  for (const auto id : job.shard->units) {
    const auto it = first_ids.find(id);
    if (it == first_ids.end())
      throw job_error(job.source_name, "shard.units",
                      "point " + hex16(id) + " does not begin a unit of the job (the shard belongs to another job)");
    chosen[it->second] = true;
  }
  std::vector<sweep_unit> part;
  part.reserve(job.shard->units.size());
  for (std::size_t u = 0; u < units.size(); ++u)
    if (chosen[u]) part.push_back(std::move(units[u]));
  return part;
}

double unit_cost_seconds(const sweep_unit& unit) {
  const auto& method = methods::find_method(unit.points.front().point);
  double cost = 0;
  for (const auto& p : unit.points) cost += method.cost_seconds(p.point);
  return cost;
}

std::vector<shard_spec> partition(const std::vector<sweep_unit>& units, std::uint32_t count) {
  if (count == 0) throw std::invalid_argument("a job is split into at least 1 shard");
  // Longest processing time first: units by decreasing estimated cost (ties by first point id, so
  // the order never depends on the job file's), each to the least loaded shard (ties: the lowest
  // index). Its largest shard is at most 4/3 of the optimum, and within one unit of the mean when
  // units are small against it.
  std::vector<std::pair<double, std::uint64_t>> order;
  order.reserve(units.size());
  for (const auto& u : units) order.emplace_back(unit_cost_seconds(u), u.points.front().id);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<shard_spec> shards(count);
  std::vector<double> load(count, 0.0);
  for (std::uint32_t i = 0; i < count; ++i) shards[i].index = i, shards[i].count = count;
  for (const auto& [cost, id] : order) {
    const auto lightest = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[lightest] += cost;
    shards[lightest].units.push_back(id);
  }
  for (auto& shard : shards) std::sort(shard.units.begin(), shard.units.end());
  return shards;
}

std::vector<sweep_unit> expand_whole_job(const job_spec& job, std::uint64_t max_points) {
  const auto planned = product_point_count(job);
  if (planned > max_points)
    throw job_error(job.source_name, "grid",
                    "the job's axes multiply to " +
                        (planned == std::numeric_limits<std::uint64_t>::max() ? std::string("more than 1.8e19")
                                                                             : std::to_string(planned)) +
                        " points, above the limit of " + std::to_string(max_points) +
                        " (nothing was expanded; raise the limit with --max-points if this is intended)");
  std::vector<sweep_unit> units;
  std::unordered_set<std::uint64_t> seen;
  for (std::size_t e = 0; e < job.methods.size(); ++e) {
    const auto& entry = job.methods[e];
    const std::string label = "method[" + std::to_string(e + 1) + "] (" + entry.name + ")";
    auto points = entry_points(job, entry, label);
    const bool chained = entry.continuation == continuation_kind::alpha;
    if (!chained) {
      for (auto& [p, repeat] : points) {
        sweep_point sp{std::move(p), repeat, 0};
        sp.id = point_id(sp.point, repeat, false);
        if (!seen.insert(sp.id).second) continue; // collapsed axis or a repeated value
        sp.point.seed = model::derive_seed(job.master_seed, seed_identity(sp.point, repeat, sp.id, false));
        units.push_back({{std::move(sp)}, e});
      }
      continue;
    }
    // Chains: everything but α equal (same repeat), ordered by increasing α.
    std::map<std::string, std::size_t> chain_of;
    std::vector<sweep_unit> chains;
    for (auto& [p, repeat] : points) {
      grid::point key_point = p;
      key_point.alpha = grid::not_set;
      const std::string key = key_point.canonical() + ";repeat=" + std::to_string(repeat);
      auto [it, inserted] = chain_of.emplace(key, chains.size());
      if (inserted) chains.push_back({{}, e});
      sweep_point sp{std::move(p), repeat, 0};
      sp.id = point_id(sp.point, repeat, true);
      sp.point.seed = model::derive_seed(job.master_seed, seed_identity(sp.point, repeat, sp.id, true));
      auto& chain = chains[it->second].points;
      if (std::none_of(chain.begin(), chain.end(), [&](const sweep_point& q) { return q.id == sp.id; }))
        chain.push_back(std::move(sp));
    }
    for (auto& chain : chains) {
      std::stable_sort(chain.points.begin(), chain.points.end(),
                       [](const sweep_point& a, const sweep_point& b) { return a.point.alpha < b.point.alpha; });
      std::size_t already = 0;
      for (const auto& sp : chain.points) already += seen.contains(sp.id) ? 1 : 0;
      if (already == chain.points.size()) continue; // the same chain given twice
      if (already > 0)
        throw job_error(job.source_name, label,
                        "a continuation chain partly overlaps points of an earlier entry (first: " +
                            chain.points.front().point.canonical() + ")");
      for (const auto& sp : chain.points) seen.insert(sp.id);
      units.push_back(std::move(chain));
    }
  }
  return units;
}

std::vector<grid::work_unit> work_units(const std::vector<sweep_unit>& units) {
  std::vector<grid::work_unit> out;
  out.reserve(units.size());
  for (const auto& u : units) out.push_back(u.work_unit());
  return out;
}

std::size_t point_count(const std::vector<sweep_unit>& units) {
  std::size_t n = 0;
  for (const auto& u : units) n += u.points.size();
  return n;
}

std::string fingerprint(const std::vector<sweep_unit>& units) {
  std::vector<std::string> lines;
  lines.reserve(units.size());
  for (const auto& u : units) {
    std::string line = u.is_chain() ? "chain" : "point";
    for (const auto& p : u.points) line.append(" ").append(hex16(p.id)).append(":").append(hex16(p.point.seed));
    lines.push_back(std::move(line));
  }
  std::sort(lines.begin(), lines.end());
  std::string text = "slr-sweep job fingerprint v1\n";
  for (const auto& line : lines) text += line + "\n";
  return hex16(model::stable_hash(text));
}

std::string fingerprint(const job_spec& job) { return fingerprint(expand_whole_job(job)); }

extension_check check_extension(const std::vector<sweep_unit>& original, const std::vector<sweep_unit>& extended) {
  extension_check check;
  struct location {
    std::size_t unit, position;
  };
  std::unordered_map<std::uint64_t, location> where;
  for (std::size_t u = 0; u < extended.size(); ++u)
    for (std::size_t i = 0; i < extended[u].points.size(); ++i) where.emplace(extended[u].points[i].id, location{u, i});
  for (const auto& unit : original) {
    for (const auto& p : unit.points) {
      const auto it = where.find(p.id);
      if (it == where.end()) {
        check.reason = "point " + p.point.canonical() + " (repeat " + std::to_string(p.repeat) +
                       ") of the archived job is not in the new job";
        return check;
      }
      const auto& q = extended[it->second.unit].points[it->second.position];
      if (q.point.seed != p.point.seed) {
        check.reason = "point " + p.point.canonical() + " has a different seed in the new job (master seed changed?)";
        return check;
      }
      ++check.shared_points;
    }
    // A chain may gain α values (before, between or after its points: resume solves them from
    // the stored record of their nearest neighbour) but must keep its points together, in order.
    const auto home = where.at(unit.points.front().id).unit;
    std::size_t last = 0;
    for (std::size_t i = 0; i < unit.points.size(); ++i) {
      const auto at = where.at(unit.points[i].id);
      if (at.unit != home || (i > 0 && at.position <= last)) {
        check.reason = "the continuation chain starting at " + unit.points.front().point.canonical() +
                       " is split or reordered in the new job (a chain may only gain alpha values)";
        return check;
      }
      last = at.position;
    }
  }
  check.added_points = point_count(extended) - check.shared_points;
  check.accepted = true;
  return check;
}

} // namespace slr::job
