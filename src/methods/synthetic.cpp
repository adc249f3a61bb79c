// Method "synthetic": a TESTING method for the scheduler, the archive and benchmarks — not
// physics. Its result columns are a deterministic function of (point identity, seed) only
// (hash-derived numbers), so any run on any rank count must reproduce them bit for bit. Options
// make a point cost a chosen wall time (compute-bound busy work), declare/touch memory, fail
// when a parameter matches (failure injection), or ignore the wall-time cap (to exercise the
// scheduler's hard timeout for non-cooperative solvers).
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "adapters.hpp"
#include "slr/model/random.hpp"

namespace slr::methods::detail {
namespace {
// fail-if = "key=value": true when the point's canonical text holds exactly that field, or for
// key "seed" when the seed equals value. Several conditions may be joined with '|'.
bool failure_requested(const grid::point& p, const std::string& condition_list) {
  if (condition_list.empty()) return false;
  std::string canonical = ";";
  canonical.append(p.canonical()).append(";");
  std::size_t start = 0;
  while (start <= condition_list.size()) {
    const auto bar = std::min(condition_list.find('|', start), condition_list.size());
    const auto condition = condition_list.substr(start, bar - start);
    if (!condition.empty()) {
      if (condition.starts_with("seed=")) {
        if (condition.substr(5) == std::to_string(p.seed)) return true;
      } else if (condition.starts_with("fail-if=")) {
        // never matches itself
      } else if (canonical.find(";" + condition + ";") != std::string::npos) {
        return true;
      }
    }
    start = bar + 1;
  }
  return false;
}

// Compute-bound busy work for `seconds` of wall time: integer mixing that the optimiser cannot
// drop (the result feeds `sink`). Returns false if it stopped early at `limit_s`.
bool busy_work(double seconds, double limit_s, std::uint64_t& sink) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  std::uint64_t x = sink | 1U;
  for (;;) {
    for (int i = 0; i < 256; ++i) x = (x ^ (x >> 31)) * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(i);
    const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
    if (elapsed >= limit_s) {
      sink = x;
      return false;
    }
    if (elapsed >= seconds) break;
  }
  sink = x;
  return true;
}
} // namespace

method_descriptor describe_synthetic() {
  method_descriptor m;
  m.name = "synthetic";
  m.summary = "TESTING ONLY: hash-derived results of (identity, seed) with tunable cost and failure injection";
  m.listed = false;
  m.finite_alpha = true; // alpha, r_k, r_v are grid parameters, so chains along alpha can be tested
  m.options = {
      {"cost-us", option_spec::value_type::real, "0", "busy-work wall time per point in microseconds (compute-bound)",
       {}, 0, 1e10},
      {"memory-mb", option_spec::value_type::real, "0",
       "memory the point declares for the node budget and actually touches, in MiB", {}, 0, 1e6},
      {"fail-if", option_spec::value_type::text, "",
       "throw when the point matches key=value (a canonical field, e.g. alpha=2, or seed=N); '|' joins several", {}},
      {"cooperative", option_spec::value_type::choice, "yes",
       "yes: the busy work honours the wall-time cap; no: it ignores it (tests the scheduler's hard timeout)",
       {"yes", "no"}},
  };
  {
    const std::string uniform = "hash-derived uniform number in [0, 1) of (seed, identity); no meaning";
    for (const char* column : {"risk", "risk_stderr", "bayes_risk", "test_risk", "train_loss"})
      m.outputs.push_back({.name = column, .meaning = uniform});
    for (auto o : order_parameter_outputs("nothing")) m.outputs.push_back({.name = o.name, .meaning = uniform});
    m.outputs.insert(m.outputs.end(), {
        {.name = "residual", .meaning = uniform},
        {.name = "free_entropy", .meaning = "hash-derived standard normal number; no meaning"},
        {.name = "free_entropy_other", .meaning = "the top 52 bits of the point's identity (ties a row to its point)"},
        {.name = "iterations", .meaning = "1, or one more than the warm-start record's along a continuation chain"},
    });
  }
  m.solve = [](const grid::point& p, const run_context& context) {
    if (failure_requested(p, option_text(p, "fail-if")))
      throw std::runtime_error("synthetic failure injected (fail-if=" + option_text(p, "fail-if") + ")");
    const auto memory = static_cast<std::size_t>(option_number(p, "memory-mb") * 1048576.0);
    std::vector<unsigned char> block(memory);
    for (std::size_t i = 0; i < block.size(); i += 4096) block[i] = static_cast<unsigned char>(i >> 12);

    const std::uint64_t identity = p.identity();
    std::uint64_t mix = identity ^ (block.empty() ? 0U : block.back());
    const bool cooperative = option_text(p, "cooperative") == "yes";
    const double limit = cooperative ? context.wall_time_limit_s : std::numeric_limits<double>::infinity();
    grid::result_record r;
    if (!busy_work(option_number(p, "cost-us") * 1e-6, limit, mix)) {
      r.status = grid::status::timeout;
      r.message = "synthetic busy work stopped at the wall-time cap";
      return r;
    }
    // The values: uniform numbers from the counter-based stream of (seed, identity), never
    // from the busy work, the rank or the order.
    model::counter_rng rng(model::derive_seed(p.seed, identity), model::stream_purpose::repeat, 0);
    for (const char* column : {"risk", "risk_stderr", "bayes_risk", "test_risk", "train_loss",
                               "order_parameters.m_kk", "order_parameters.m_kv", "order_parameters.m_vk",
                               "order_parameters.m_vv", "order_parameters.q_kk", "order_parameters.q_kv",
                               "order_parameters.q_vv", "residual"})
      r.set(column, rng.uniform());
    r.set("free_entropy", rng.normal());
    // The top 52 bits of the identity (exact in a double), so tests can tie a row to its point.
    r.set("free_entropy_other", static_cast<double>(identity >> 12));
    // 1 for a cold start; along a continuation chain, one more than the warm-start record.
    const bool warm = context.warm_start != nullptr && std::isfinite(context.warm_start->get("iterations"));
    r.set("iterations", warm ? context.warm_start->get("iterations") + 1 : 1);
    return r;
  };
  m.cost_seconds = [](const grid::point& p) { return 1e-6 * option_number(p, "cost-us"); };
  m.memory_bytes = [](const grid::point& p) {
    return static_cast<std::size_t>(option_number(p, "memory-mb") * 1048576.0);
  };
  return m;
}

} // namespace slr::methods::detail
