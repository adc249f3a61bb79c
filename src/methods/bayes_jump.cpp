// Method "bayes-jump": the α at which the Bayes-optimal state evolution jumps (first-order
// transition), bracketed by bisection to a relative tolerance (include/slr/theory/bayes_jump.hpp).
// A point is (task, ν, L, Δ) with the search range as options; α and r are not grid parameters of
// this method. The bracket's two ends, their risks, overlaps and free-entropy differences are
// method columns, so the jump can be drawn on the state-evolution curve of the same job.
#include <cmath>
#include <nlohmann/json.hpp>

#include "adapters.hpp"
#include "slr/theory/bayes_jump.hpp"

namespace slr::methods::detail {
namespace {
using json = nlohmann::ordered_json;

// Solves expected per search: the scan plus the bisection steps from one scan interval down to
// the tolerance.
double expected_evaluations(const grid::point& p) {
  const double scan = option_number(p, "scan");
  const double interval = std::log(option_number(p, "alpha-max") / option_number(p, "alpha-min")) / (scan - 1);
  const double one = scan + std::max(0.0, std::ceil(std::log2(interval / std::log1p(option_number(p, "jump-tol")))));
  // The batches of the uncertainty: as many solves on a 1/batches share of the samples each.
  return option_number(p, "jump-batches") >= 2 ? 2 * one : one;
}

void set_side(grid::result_record& r, const char* suffix, const theory::bayes_jump_side& side) {
  const auto& b = side.result.chosen;
  const std::string s(suffix);
  r.set_method_value("alpha_" + s, side.alpha);
  r.set_method_value("test_risk_" + s, b.test_risk.value);
  r.set_method_value("test_risk_stderr_" + s, b.test_risk.stderr);
  r.set_method_value("q_kk_" + s, b.q(0, 0));
  r.set_method_value("q_vv_" + s, b.q(1, 1));
  r.set_method_value("free_entropy_gap_" + s, side.free_entropy_gap());
  r.set_method_value("free_entropy_gap_stderr_" + s, side.free_entropy_gap_stderr());
}

json side_json(const theory::bayes_jump_side& side) {
  const auto& b = side.result.chosen;
  return {{"alpha", side.alpha},
          {"chosen", b.start},
          {"status", std::string(theory::solve_status_name(side.result.status))},
          {"test_risk", finite_or_null(b.test_risk.value)},
          {"q_kk", finite_or_null(b.q(0, 0))},
          {"q_vv", finite_or_null(b.q(1, 1))},
          {"coexistence", side.result.coexistence},
          {"free_entropy_gap", finite_or_null(side.free_entropy_gap())},
          {"free_entropy_gap_stderr", finite_or_null(side.free_entropy_gap_stderr())}};
}
} // namespace

method_descriptor describe_bayes_jump() {
  method_descriptor m;
  m.name = "bayes-jump";
  m.summary = "alpha of the jump of the Bayes-optimal state evolution, bracketed by bisection (free entropies of both branches)";
  m.finite_alpha = false;
  using vt = option_spec::value_type;
  m.options = {
      {"alpha-min", vt::real, "0.5", "lower end of the searched alpha range", {}, 1e-6, 1e6},
      {"alpha-max", vt::real, "4", "upper end of the searched alpha range", {}, 1e-6, 1e6},
      {"scan", vt::integer, "9", "log-spaced alpha values of the coarse scan", {}, 3, 1000},
      {"jump-tol", vt::real, "0.001", "stop when alpha_above / alpha_below - 1 <= jump-tol", {}, 1e-9, 0.5},
      samples_option("100000", 100),
      {"tol", vt::real, "0.00001", "state evolution: stop when max |q_new - q| < tol", {}, 1e-14, 1},
      {"max-iter", vt::integer, "1000", "state evolution: iteration cap", {}, 1, 1e7},
      {"damping", vt::real, "1", "state evolution: damping eta on q-hat", {}, 1e-6, 1},
      {"projection", vt::choice, "diagonal", "diagonal: project q-hat onto the manifold; full: 2x2",
       {"diagonal", "full"}},
      {"inner-samples", vt::integer, "256", "Monte Carlo samples of the student fields (max-SLR, finite nu)", {},
       1, 1e6},
      {"quadrature-nodes", vt::integer, "32", "Gauss-Hermite nodes (max-SLR, nu = inf)", {}, 4, 200},
      {"jump-batches", vt::integer, "4",
       "independent searches on samples/jump-batches samples each for alpha_jump_stderr (batch means; doubles the "
       "cost); 0 or 1: no uncertainty", {}, 0, 64},
  };
  m.options.back().omitted_when_default = true; // points of existing archives keep their identities
  m.validate = [](const grid::point& p) {
    if (!(option_number(p, "alpha-min") < option_number(p, "alpha-max")))
      throw std::invalid_argument("option 'alpha-min' must be below 'alpha-max'");
  };
  m.outputs = {
      {.name = "jump_found", .meaning = "1 if a discontinuity of the state evolution was bracketed to jump-tol, else 0"},
      {.name = "alpha_jump", .meaning = "alpha = N/D of the jump (first-order transition; NaN if none found)"},
      {.name = "alpha_jump_stderr",
       .meaning = "its uncertainty: standard deviation of alpha_jump over the jump-batches independent searches "
                  "(not divided by sqrt(batches)) with half the bracket in quadrature (docs/theory.md §5)"},
  };
  // The two ends of the final bracket, as method columns and again (with the chosen start, status
  // and coexistence) in the objects below / above of the extras.
  for (const std::string side : {"below", "above"}) {
    const std::string end = " at the " + std::string(side == "below" ? "lower" : "upper") + " end of the bracket";
    m.outputs.insert(m.outputs.end(), {
        {.name = "alpha_" + side, .meaning = "alpha" + end},
        {.name = "test_risk_" + side, .meaning = "Bayes-optimal test risk of the chosen branch" + end},
        {.name = "test_risk_stderr_" + side, .meaning = "Monte Carlo standard error of test_risk_" + side},
        {.name = "q_kk_" + side, .meaning = "overlap q_kk of the chosen branch" + end},
        {.name = "q_vv_" + side, .meaning = "overlap q_vv of the chosen branch" + end},
        {.name = "free_entropy_gap_" + side,
         .meaning = "Phi_informed - Phi_uninformed" + end +
                    " (+inf under exact recovery; NaN unless both branches converged to distinct fixed points)"},
        {.name = "free_entropy_gap_stderr_" + side,
         .meaning = "Monte Carlo standard error of free_entropy_gap_" + side},
    });
  }
  m.outputs.insert(m.outputs.end(), {
      {.name = "jump_gap_risk", .meaning = "test risk below minus test risk above: the size of the jump in the risk"},
      {.name = "jump_gap_q", .meaning = "max |q_above - q_below| over the overlaps: the size of the jump in q"},
      {.name = "evaluations", .meaning = "state-evolution solves of the search (each runs both starts)"},
      {.name = "batch_alpha_jumps", .meaning = "alpha_jump of each batch search that located the jump"},
  });
  for (const std::string side : {"below", "above"})
    m.outputs.insert(m.outputs.end(), {
        {.name = side + ".alpha", .meaning = "alpha of the bracket's " + side + " end"},
        {.name = side + ".chosen", .meaning = "start of the chosen branch there: informed or uninformed"},
        {.name = side + ".status", .meaning = "status of the state-evolution solve there"},
        {.name = side + ".test_risk", .meaning = "test_risk_" + side + " again"},
        {.name = side + ".q_kk", .meaning = "q_kk_" + side + " again"},
        {.name = side + ".q_vv", .meaning = "q_vv_" + side + " again"},
        {.name = side + ".coexistence", .meaning = "true if both branches exist there at different q"},
        {.name = side + ".free_entropy_gap", .meaning = "free_entropy_gap_" + side + " again"},
        {.name = side + ".free_entropy_gap_stderr", .meaning = "free_entropy_gap_stderr_" + side + " again"},
    });
  m.outputs.push_back({.name = "scan",
                       .meaning = "the coarse log-spaced scan in increasing alpha: one object per alpha with the "
                                  "keys of below / above; in the point's JSON it takes the place of the option scan"});
  m.solve = [](const grid::point& p, const run_context& context) {
    theory::bayes_jump_options o;
    o.alpha_min = option_number(p, "alpha-min");
    o.alpha_max = option_number(p, "alpha-max");
    o.scan_points = static_cast<std::size_t>(option_number(p, "scan"));
    o.relative_tolerance = option_number(p, "jump-tol");
    o.solver.samples = static_cast<std::size_t>(option_number(p, "samples"));
    o.solver.tolerance = option_number(p, "tol");
    o.solver.max_iterations = static_cast<int>(option_number(p, "max-iter"));
    o.solver.damping = option_number(p, "damping");
    o.solver.diagonal = option_text(p, "projection") == "diagonal";
    o.solver.inner_samples = static_cast<std::size_t>(option_number(p, "inner-samples"));
    o.solver.quadrature_nodes = static_cast<std::size_t>(option_number(p, "quadrature-nodes"));
    o.batches = static_cast<std::size_t>(option_number(p, "jump-batches"));
    o.solver.wall_time_limit_s = context.wall_time_limit_s;
    o.solver.threads = context.threads;
    const auto jump = theory::locate_bayes_jump(p.problem, o, p.seed);

    grid::result_record r;
    r.status = to_grid_status(jump.status);
    r.message = jump.message;
    r.set_method_value("jump_found", jump.found ? 1.0 : 0.0);
    r.set_method_value("alpha_jump", jump.alpha_jump);
    r.set_method_value("alpha_jump_stderr", jump.alpha_jump_stderr);
    set_side(r, "below", jump.below);
    set_side(r, "above", jump.above);
    r.set_method_value("jump_gap_risk", jump.gap_risk);
    r.set_method_value("jump_gap_q", jump.gap_q);
    r.set_method_value("evaluations", static_cast<double>(jump.evaluations));

    json extra;
    extra["batch_alpha_jumps"] = jump.batch_alpha_jumps;
    extra["below"] = side_json(jump.below);
    extra["above"] = side_json(jump.above);
    json scan = json::array();
    for (const auto& side : jump.scan) scan.push_back(side_json(side));
    extra["scan"] = scan;
    r.extra_json = extra.dump();
    return r;
  };
  // The solves of a search sit near the jump, where both branches coexist and the iteration
  // converges slowly: about twice the state-evolution model's average solve. Measured: the spiked
  // ν = 1, L = 3, S = 4e5 jump of jobs/fig3_theory.toml (4 batches) took 682 s, the model without
  // this factor gave 346 s (jobs/figures/data/fig3_theory.shard-0-of-8.log).
  constexpr double near_jump_slowdown = 2.0;
  m.cost_seconds = [](const grid::point& p) {
    return near_jump_slowdown * expected_evaluations(p) * find_method("state-evolution").cost_seconds(p);
  };
  m.memory_bytes = [](const grid::point& p) { return find_method("state-evolution").memory_bytes(p); };
  return m;
}

} // namespace slr::methods::detail
