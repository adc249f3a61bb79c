// Method "state-evolution": the Bayes-optimal finite-α state evolution (docs/theory.md §5). It has no
// penalty, so its points carry α but no r_k, r_v (uses_regularisation = false). Both starts run
// by default; the branch with the larger free entropy is reported, the other one's free entropy
// goes to free_entropy_other and both branches to the extra JSON.
#include <cmath>
#include <nlohmann/json.hpp>

#include "adapters.hpp"
#include "slr/theory/state_evolution.hpp"

namespace slr::methods::detail {
namespace {
using json = nlohmann::ordered_json;

json branch_json(const theory::state_evolution_branch& b) {
  return {{"start", b.start},
          {"status", std::string(theory::solve_status_name(b.status))},
          {"message", b.message},
          {"iterations", b.iterations},
          {"residual", finite_or_null(b.residual)},
          {"q_kk", finite_or_null(b.q(0, 0))},
          {"q_kv", finite_or_null(b.q(0, 1))},
          {"q_vv", finite_or_null(b.q(1, 1))},
          {"q_hat_kk", finite_or_null(b.q_hat(0, 0))},
          {"q_hat_kv", finite_or_null(b.q_hat(0, 1))},
          {"q_hat_vv", finite_or_null(b.q_hat(1, 1))},
          {"test_risk", finite_or_null(b.test_risk.value)},
          {"test_risk_stderr", finite_or_null(b.test_risk.stderr)},
          {"free_entropy", finite_or_null(b.free_entropy.value)},
          {"free_entropy_stderr", finite_or_null(b.free_entropy.stderr)}};
}
} // namespace

method_descriptor describe_state_evolution() {
  method_descriptor m;
  m.name = "state-evolution";
  m.summary = "Bayes-optimal finite-alpha state evolution (test risk, overlaps, free entropy of both branches)";
  m.finite_alpha = true;
  m.uses_regularisation = false;
  using vt = option_spec::value_type;
  m.options = {
      samples_option("100000", 100),
      common_samples_option(),
      {"init", vt::choice, "both", "starts: both (pick the larger free entropy), informed or uninformed",
       {"both", "informed", "uninformed"}},
      {"damping", vt::real, "1", "damping eta on q-hat", {}, 1e-6, 1},
      {"tol", vt::real, "0.00001", "stop when max |q_new - q| < tol", {}, 1e-14, 1},
      {"max-iter", vt::integer, "1000", "iteration cap (status not_converged)", {}, 1, 1e7},
      {"projection", vt::choice, "diagonal", "diagonal: project q-hat onto the manifold; full: 2x2",
       {"diagonal", "full"}},
      {"inner-samples", vt::integer, "256", "Monte Carlo samples of the student fields (max-SLR, finite nu)", {},
       1, 1e6},
      {"quadrature-nodes", vt::integer, "32", "Gauss-Hermite nodes (max-SLR, nu = inf)", {}, 4, 200},
  };
  m.outputs = {
      {.name = "test_risk",
       .meaning = "Bayes-optimal test risk Delta^2 + E[(y - y_hat)^2] of the chosen branch (docs/theory.md §5)"},
      {.name = "test_risk_stderr", .meaning = "Monte Carlo standard error of test_risk"},
      {.name = "risk", .meaning = "the same as test_risk (the risk column every SLR method fills)"},
      {.name = "risk_stderr", .meaning = "the same as test_risk_stderr"},
  };
  for (auto& o : order_parameter_outputs("the Bayes posterior mean (Nishimori: M = Q = q)"))
    m.outputs.push_back(std::move(o));
  m.outputs.insert(m.outputs.end(), {
      {.name = "V.kk", .meaning = "(I - q)_kk: posterior variance of the key direction per dimension"},
      {.name = "V.kv", .meaning = "(I - q)_kv"},
      {.name = "V.vv", .meaning = "(I - q)_vv: posterior variance of the value direction per dimension"},
      {.name = "hat.m_kk", .meaning = "q_hat_kk (Nishimori: M_hat = Q_hat = V_hat = q_hat)"},
      {.name = "hat.m_kv", .meaning = "q_hat_vk"},
      {.name = "hat.m_vk", .meaning = "q_hat_kv"},
      {.name = "hat.m_vv", .meaning = "q_hat_vv"},
      {.name = "hat.q_kk", .meaning = "q_hat_kk = alpha E[sum_l g_out g_out^T]_kk, the conjugate of q"},
      {.name = "hat.q_kv", .meaning = "q_hat_kv"},
      {.name = "hat.q_vv", .meaning = "q_hat_vv"},
      {.name = "hat.v_kk", .meaning = "q_hat_kk"},
      {.name = "hat.v_kv", .meaning = "q_hat_kv"},
      {.name = "hat.v_vv", .meaning = "q_hat_vv"},
      {.name = "iterations", .meaning = "iterations of the chosen branch"},
      {.name = "residual", .meaning = "max |q_new - q| at the chosen branch's last iteration (compare with tol)"},
      {.name = "free_entropy",
       .meaning = "free entropy Phi = -tr(q q_hat)/2 + [tr q_hat - log det(I + q_hat)]/2 + alpha E[log Z_out] of the "
                  "chosen branch, per dimension (diverges as q_vv -> 1 at Delta = 0)"},
      {.name = "free_entropy_other",
       .meaning = "free entropy of the branch from the other start", .condition = "init = both"},
      {.name = "chosen", .meaning = "the start of the reported branch: informed or uninformed (the larger Phi)"},
      {.name = "coexistence",
       .meaning = "true if the two starts ended at different q (max |dq| > 100 tol): coexisting fixed points"},
      {.name = "free_entropy_stderr", .meaning = "Monte Carlo standard error of free_entropy"},
      {.name = "branches",
       .meaning = "one object per start run: start, status, message, iterations, residual, q_kk, q_kv, q_vv, "
                  "q_hat_kk, q_hat_kv, q_hat_vv, test_risk, test_risk_stderr, free_entropy, free_entropy_stderr"},
      {.name = "note", .meaning = "why the free entropies do not compare branches at Delta = 0",
       .condition = "delta = 0"},
  });
  m.solve = [](const grid::point& p, const run_context& context) {
    theory::state_evolution_options o;
    o.samples = static_cast<std::size_t>(option_number(p, "samples"));
    o.damping = option_number(p, "damping");
    o.tolerance = option_number(p, "tol");
    o.max_iterations = static_cast<int>(option_number(p, "max-iter"));
    o.diagonal = option_text(p, "projection") == "diagonal";
    o.inner_samples = static_cast<std::size_t>(option_number(p, "inner-samples"));
    o.quadrature_nodes = static_cast<std::size_t>(option_number(p, "quadrature-nodes"));
    const auto& init = option_text(p, "init");
    o.informed = init != "uninformed";
    o.uninformed = init != "informed";
    o.wall_time_limit_s = context.wall_time_limit_s;
    o.threads = context.threads;
    const theory::state_evolution se(p.problem, p.alpha, o);
    const auto result = se.solve(p.seed);
    const auto& b = result.chosen;

    grid::result_record r;
    r.status = to_grid_status(result.status);
    r.message = b.message;
    r.set("test_risk", b.test_risk.value);
    r.set("test_risk_stderr", b.test_risk.stderr);
    r.set("risk", b.test_risk.value);
    r.set("risk_stderr", b.test_risk.stderr);
    // Nishimori: M = Q = q, V = I − q; the conjugates coincide, M̂ = Q̂ = V̂ = q̂.
    r.set_order_parameters(model::order_parameters::from_matrices(b.q, b.q));
    const Eigen::Matrix2d V = Eigen::Matrix2d::Identity() - b.q;
    r.set("V.kk", V(0, 0));
    r.set("V.kv", V(0, 1));
    r.set("V.vv", V(1, 1));
    for (const char* kind : {"m", "q", "v"}) {
      r.set(std::string("hat.") + kind + "_kk", b.q_hat(0, 0));
      r.set(std::string("hat.") + kind + "_vv", b.q_hat(1, 1));
      if (std::string(kind) == "m") {
        r.set("hat.m_kv", b.q_hat(1, 0));
        r.set("hat.m_vk", b.q_hat(0, 1));
      } else {
        r.set(std::string("hat.") + kind + "_kv", b.q_hat(0, 1));
      }
    }
    r.set("iterations", b.iterations);
    r.set("residual", b.residual);
    r.set("free_entropy", b.free_entropy.value);
    for (const auto& other : result.branches)
      if (other.start != b.start) r.set("free_entropy_other", other.free_entropy.value);

    json extra;
    extra["chosen"] = b.start;
    extra["coexistence"] = result.coexistence;
    extra["free_entropy_stderr"] = finite_or_null(b.free_entropy.stderr);
    json branches = json::array();
    for (const auto& other : result.branches) branches.push_back(branch_json(other));
    extra["branches"] = branches;
    if (p.problem.delta == 0.0)
      extra["note"] = "Delta = 0: the free entropy diverges when q_vv -> 1; use Delta > 0 to compare branches";
    r.extra_json = extra.dump();
    return r;
  };
  m.cost_seconds = [](const grid::point& p) {
    const double L = p.problem.lengths.mean();
    double per_sample = 1e-7 * L;
    // max-SLR at ν = ∞ (Gauss–Hermite): measured on jobs/fig3_panels_theory_small.toml (L = 3,
    // S = 2e4, 32 nodes): a 21-point α chain 109 CPU-s, the bayes-jump's 65 solves 526 CPU-s, i.e.
    // 5–8 s a solve where 2e-7 L² nodes per sample gave 92 s (jobs/figures/data/
    // fig3_panels_theory_small.shard-{0,1}-of-6.log).
    if (p.problem.task.kind() == model::task_kind::max)
      per_sample = p.problem.task.is_hard() ? 1.8e-8 * L * L * option_number(p, "quadrature-nodes")
                                            : 3e-8 * L * option_number(p, "inner-samples");
    return 2 * 40 * option_number(p, "samples") * per_sample;
  };
  m.memory_bytes = [](const grid::point& p) {
    return static_cast<std::size_t>(option_number(p, "samples") *
                                    (static_cast<double>(p.problem.lengths.max_length()) * 24.0 + 48.0));
  };
  return m;
}

} // namespace slr::methods::detail
