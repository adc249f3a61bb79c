#include "slr/cli/plan_command.hpp"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <unordered_map>

#include "slr/job/expansion.hpp"
#include "slr/job/job_file.hpp"
#include "slr/methods/registry.hpp"
#include "slr/sweep/run.hpp"

namespace slr::cli {
namespace {

std::string human_seconds(double s) {
  std::ostringstream out;
  out << std::setprecision(3);
  if (s < 120) out << s << " s";
  else if (s < 7200) out << s / 60 << " min";
  else if (s < 2 * 86400) out << s / 3600 << " h";
  else out << s / 86400 << " d";
  return out.str();
}

std::string human_bytes(double b) {
  std::ostringstream out;
  out << std::setprecision(3);
  if (b < 1 << 20) out << b / 1024 << " KiB";
  else if (b < 1 << 30) out << b / (1 << 20) << " MiB";
  else out << b / (1 << 30) << " GiB";
  return out.str();
}

struct plan_arguments {
  std::string job_file;
  bool list = false;
  std::string shard;
  std::uint64_t max_points = job::default_max_points;
};

} // namespace

std::function<int()> add_plan_command(CLI::App& app) {
  auto args = std::make_shared<plan_arguments>();
  auto* cmd = app.add_subcommand("plan", "Expand a job file's grid and print the point count and estimated cost "
                                         "(runs nothing, writes nothing)");
  cmd->add_option("job", args->job_file, "Job file (TOML, see jobs/README.md)")->required();
  cmd->add_flag("--list", args->list, "Also print every point: id, seed, repeat and canonical parameters");
  cmd->add_option("--max-points", args->max_points,
                  "Refuse a job whose axes multiply to more points than this (checked before expanding)")
      ->capture_default_str();
  cmd->add_option("--shard", args->shard,
                  "i/n: the points and cost of shard i of n (as `run --shard i/n` sweeps it), and the balance of "
                  "the n shards");

  return [args, cmd]() -> int {
    if (!*cmd) return -1;
    auto job = job::load_job_file(args->job_file);
    auto units = job::expand(job, args->max_points);
    std::string shard_line;
    if (!args->shard.empty()) {
      const auto [index, count] = sweep::parse_shard_option(args->shard);
      const auto shards = job::partition(units, count);
      std::unordered_map<std::uint64_t, double> cost_of;
      for (const auto& unit : units) cost_of[unit.points.front().id] = job::unit_cost_seconds(unit);
      double largest = 0, sum = 0;
      for (const auto& shard : shards) {
        double cost = 0;
        for (const auto id : shard.units) cost += cost_of.at(id);
        largest = std::max(largest, cost);
        sum += cost;
      }
      const double mean = sum / count;
      std::ostringstream line;
      line << std::setprecision(3) << "shard " << index << "/" << count << " of the job; the " << count
           << " shards: largest " << human_seconds(largest) << ", mean " << human_seconds(mean) << " (largest/mean "
           << (mean > 0 ? largest / mean : 1.0) << ")\n";
      shard_line = line.str();
      job.shard = shards[index];
      units = job::expand(job, args->max_points);
    }

    struct tally {
      std::size_t points = 0, units = 0;
      double cost = 0, max_cost = 0, max_memory = 0;
    };
    std::vector<tally> per_entry(job.methods.size());
    for (const auto& unit : units) {
      auto& t = per_entry[unit.method_entry];
      ++t.units;
      const auto& method = methods::find_method(unit.points.front().point);
      const double unit_cost = job::unit_cost_seconds(unit);
      for (const auto& p : unit.points) {
        ++t.points;
        t.max_memory = std::max(t.max_memory, static_cast<double>(method.memory_bytes(p.point)));
      }
      t.cost += unit_cost;
      t.max_cost = std::max(t.max_cost, unit_cost);
    }

    std::cout << "job " << job.name << " (" << job.source_name << "), master seed " << job.master_seed
              << ", fingerprint " << job::fingerprint(job) << "\n";
    if (!job.description.empty()) std::cout << job.description << "\n";
    std::cout << shard_line;
    std::cout << std::left << std::setw(8) << "entry" << std::setw(18) << "method" << std::right << std::setw(9)
              << "points" << std::setw(9) << "units" << std::setw(14) << "cost" << std::setw(14) << "largest unit"
              << std::setw(14) << "max memory" << "  continuation\n";
    tally total;
    for (std::size_t e = 0; e < job.methods.size(); ++e) {
      const auto& t = per_entry[e];
      std::cout << std::left << std::setw(8) << e + 1 << std::setw(18) << job.methods[e].name << std::right
                << std::setw(9) << t.points << std::setw(9) << t.units << std::setw(14) << human_seconds(t.cost)
                << std::setw(14) << human_seconds(t.max_cost) << std::setw(14) << human_bytes(t.max_memory) << "  "
                << (job.methods[e].continuation == job::continuation_kind::alpha ? "alpha" : "-") << "\n";
      total.points += t.points;
      total.units += t.units;
      total.cost += t.cost;
      total.max_cost = std::max(total.max_cost, t.max_cost);
      total.max_memory = std::max(total.max_memory, t.max_memory);
    }
    // Per-method totals where a method has several entries or the job several methods: what a
    // cluster budget is split by.
    std::vector<std::pair<std::string, tally>> per_method;
    for (std::size_t e = 0; e < job.methods.size(); ++e) {
      auto it = std::find_if(per_method.begin(), per_method.end(),
                             [&](const auto& m) { return m.first == job.methods[e].name; });
      if (it == per_method.end()) it = per_method.insert(per_method.end(), {job.methods[e].name, tally{}});
      const auto& t = per_entry[e];
      it->second.points += t.points;
      it->second.units += t.units;
      it->second.cost += t.cost;
      it->second.max_cost = std::max(it->second.max_cost, t.max_cost);
      it->second.max_memory = std::max(it->second.max_memory, t.max_memory);
    }
    if (per_method.size() > 1 || per_method.size() < job.methods.size())
      for (const auto& [name, t] : per_method)
        std::cout << std::left << std::setw(8) << "method" << std::setw(18) << name << std::right << std::setw(9)
                  << t.points << std::setw(9) << t.units << std::setw(14) << human_seconds(t.cost) << std::setw(14)
                  << human_seconds(t.max_cost) << std::setw(14) << human_bytes(t.max_memory) << "\n";
    std::cout << std::left << std::setw(26) << "total" << std::right << std::setw(9) << total.points << std::setw(9)
              << total.units << std::setw(14) << human_seconds(total.cost) << std::setw(14)
              << human_seconds(total.max_cost) << std::setw(14) << human_bytes(total.max_memory) << "\n";
    std::cout << "cost = estimated single-thread CPU time (registry cost model); wall time is about cost / workers, "
                 "but at least the largest unit.\n";
    if (args->list) {
      for (const auto& unit : units) {
        for (std::size_t i = 0; i < unit.points.size(); ++i) {
          const auto& p = unit.points[i];
          char id[17];
          std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(p.id));
          std::cout << id << " seed=" << p.point.seed << " repeat=" << p.repeat
                    << (unit.is_chain() ? (i == 0 ? " chain-start " : " chain-next  ") : " ") << p.point.canonical()
                    << "\n";
        }
      }
    }
    return 0;
  };
}

} // namespace slr::cli
