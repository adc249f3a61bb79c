// Method "fixed-point": the replica-symmetric fixed point of finite-α ERM (docs/theory.md §4), with
// the test risk from the population formula at the fixed point and its seed-to-seed error.
// Warm start: when the run context carries the previous record of an α-continuation chain with
// finite order_parameters.* and V.*, the solve starts there instead of at --init.
#include <Eigen/LU>
#include <cmath>
#include <optional>
#include <nlohmann/json.hpp>

#include "adapters.hpp"
#include "slr/theory/fixed_point.hpp"

namespace slr::methods::detail {
namespace {
using json = nlohmann::ordered_json;

json matrix_json(const Eigen::Matrix2d& m) {
  return json::array({json::array({finite_or_null(m(0, 0)), finite_or_null(m(0, 1))}),
                      json::array({finite_or_null(m(1, 0)), finite_or_null(m(1, 1))})});
}

// The state stored in a previous record, if complete and admissible.
std::optional<theory::fixed_point_state> warm_state(const grid::result_record* record) {
  if (record == nullptr) return std::nullopt;
  const auto op = record->order_parameters();
  if (!op) return std::nullopt;
  for (const char* n : {"V.kk", "V.kv", "V.vv"})
    if (!std::isfinite(record->get(n))) return std::nullopt;
  theory::fixed_point_state s;
  s.M = op->M();
  s.Q = op->Q();
  s.V << record->get("V.kk"), record->get("V.kv"), record->get("V.kv"), record->get("V.vv");
  if (!(s.V(0, 0) > 0 && s.V.determinant() > 0)) return std::nullopt;
  return s;
}
} // namespace

method_descriptor describe_fixed_point() {
  method_descriptor m;
  m.name = "fixed-point";
  m.summary = "replica-symmetric fixed point of finite-alpha ERM (test risk, training loss, order parameters)";
  m.finite_alpha = true;
  using vt = option_spec::value_type;
  m.options = {
      samples_option("8000", 100),
      common_samples_option(),
      {"test-samples", vt::integer, "100000", "samples of the population risk at the fixed point (0 = skip)", {}, 0, 1e9},
      {"repeats", vt::integer, "3", "independent Monte Carlo solves (test_risk_stderr from their spread)", {}, 1, 1000},
      {"init", vt::choice, "informed", "start: informed (M=I, Q=1.2I, V=0.5I) or uninformed (M=0.01I); "
                                       "a warm start from the previous chain point overrides it",
       {"informed", "uninformed"}},
      {"damping", vt::real, "0.3", "damping eta of x <- (1-eta) x + eta F(x) (the mixing of Anderson steps)", {}, 1e-6, 1},
      {"acceleration", vt::choice, "anderson",
       "anderson: safeguarded type-II Anderson mixing of the damped iteration; none: plain damping",
       {"anderson", "none"}},
      {"anderson-memory", vt::integer, "5", "past iterates used by Anderson mixing", {}, 1, 20},
      {"prox-starts", vt::choice, "both",
       "both: linearised and warm start of every prox problem, keep the lower; adaptive: skip the linearised "
       "start when the converged warm start is already below its starting value (~45% faster; the state "
       "then depends on the iteration path at weak regularisation, ~3% on V_k at r=0.1)",
       {"both", "adaptive"}},
      {"tol", vt::real, "0.0001", "stop when max |F(x) - x| over M, Q, V < tol", {}, 1e-14, 1},
      {"max-iter", vt::integer, "500", "iteration cap (status not_converged)", {}, 1, 1e7},
      {"projection", vt::choice, "diagonal", "diagonal: project hats onto the manifold; full: 2x2 matrices",
       {"diagonal", "full"}},
      {"estimator", vt::choice, "auto", "M-hat estimator (auto = tilt-score unless max-SLR nu=inf)",
       {"auto", "stein-free", "tilt-score"}},
  };
  m.outputs = {
      {.name = "test_risk",
       .meaning = "test risk E(M, Q) = E[(y - f(X))^2] at the fixed point's order parameters (population formula, "
                  "docs/theory.md §2; includes Delta^2), mean over the repeats"},
      {.name = "test_risk_stderr", .meaning = "standard error of test_risk from the spread of the repeats"},
      {.name = "risk", .meaning = "the same as test_risk (the risk column every SLR method fills)"},
      {.name = "risk_stderr", .meaning = "the same as test_risk_stderr"},
      {.name = "train_loss",
       .meaning = "training loss per sample E[(y - f)^2 / 2] at the proximal fields (docs/theory.md §4; the factor "
                  "1/2 of the ERM objective)"},
      {.name = "train_loss_regularised",
       .meaning = "train_loss + (r_k q_kk + r_v q_vv)/(2 alpha): the regularised ERM objective per sample"},
  };
  for (auto& o : order_parameter_outputs("the fixed point (the replica-symmetric prediction for ERM)"))
    m.outputs.push_back(std::move(o));
  m.outputs.insert(m.outputs.end(), {
      {.name = "V.kk", .meaning = "V_kk: key-key entry of the 2x2 response V = (Lambda + V_hat)^-1 of the RS state"},
      {.name = "V.kv", .meaning = "V_kv: key-value entry of V (symmetrised)"},
      {.name = "V.vv", .meaning = "V_vv: value-value entry of V"},
      {.name = "hat.m_kk", .meaning = "conjugate M_hat, entry (teacher k*, student k) (alpha included; docs/theory.md §4)"},
      {.name = "hat.m_kv", .meaning = "conjugate M_hat, entry (teacher v*, student k)"},
      {.name = "hat.m_vk", .meaning = "conjugate M_hat, entry (teacher k*, student v)"},
      {.name = "hat.m_vv", .meaning = "conjugate M_hat, entry (teacher v*, student v)"},
      {.name = "hat.q_kk", .meaning = "conjugate Q_hat = alpha E[sum_l f_out f_out^T], key-key entry"},
      {.name = "hat.q_kv", .meaning = "conjugate Q_hat, key-value entry"},
      {.name = "hat.q_vv", .meaning = "conjugate Q_hat, value-value entry"},
      {.name = "hat.v_kk", .meaning = "conjugate V_hat (the channel's curvature), key-key entry"},
      {.name = "hat.v_kv", .meaning = "conjugate V_hat, key-value entry"},
      {.name = "hat.v_vv", .meaning = "conjugate V_hat, value-value entry"},
      {.name = "iterations", .meaning = "fixed-point iterations of the last repeat"},
      {.name = "residual", .meaning = "max |F(x) - x| over M, Q, V at the last iteration (compare with tol)"},
      {.name = "nonpd_fraction",
       .meaning = "fraction of the channel's proximal problems whose loss Hessian is not positive definite"},
      {.name = "start",
       .meaning = "the start used: informed, uninformed (the init option) or warm (the previous point of an "
                  "alpha-continuation chain)"},
      {.name = "train_loss_stderr", .meaning = "standard error of train_loss from the spread of the repeats"},
      {.name = "repeat_solves",
       .meaning = "one object per repeat (independent Monte Carlo sample): its seed, status, iterations, residual, "
                  "test_risk and its sample stderr, train_loss, m_kk, m_vv, q_kk, q_vv, both M_hat estimators "
                  "(stein-free, tilt-score) and the stderr of their difference, nonpd_fraction, channel_samples, "
                  "prox_problems, newton_steps, accelerated_steps, acceleration_restarts, channel_seconds (wall "
                  "time of its channel evaluations, s)"},
  });
  m.solve = [](const grid::point& p, const run_context& context) {
    theory::fixed_point_options o;
    o.samples = static_cast<std::size_t>(option_number(p, "samples"));
    o.test_samples = static_cast<std::size_t>(option_number(p, "test-samples"));
    o.repeats = static_cast<unsigned>(option_number(p, "repeats"));
    o.damping = option_number(p, "damping");
    o.acceleration = option_text(p, "acceleration") == "none" ? theory::fixed_point_acceleration::none
                                                              : theory::fixed_point_acceleration::anderson;
    o.anderson_memory = static_cast<int>(option_number(p, "anderson-memory"));
    o.prox_starts = option_text(p, "prox-starts") == "both" ? theory::prox_start_policy::both
                                                            : theory::prox_start_policy::adaptive;
    o.tolerance = option_number(p, "tol");
    o.max_iterations = static_cast<int>(option_number(p, "max-iter"));
    o.diagonal = option_text(p, "projection") == "diagonal";
    const auto& estimator = option_text(p, "estimator");
    o.estimator = estimator == "stein-free"   ? theory::hat_m_estimator::stein_free
                  : estimator == "tilt-score" ? theory::hat_m_estimator::tilt_score
                                              : theory::hat_m_estimator::automatic;
    o.wall_time_limit_s = context.wall_time_limit_s;
    o.threads = context.threads;
    std::string start = option_text(p, "init");
    if (auto warm = warm_state(context.warm_start)) {
      o.initial_state = *warm;
      start = "warm";
    } else if (start == "uninformed") {
      o.initial_state = theory::fixed_point_state::uninformed();
    }
    const theory::fixed_point_solver solver(p.problem, p.alpha, p.r_k, p.r_v, o);
    const auto fp = solver.solve(p.seed);

    grid::result_record r;
    r.status = to_grid_status(fp.status);
    r.message = fp.message;
    if (fp.status == theory::solve_status::ok) {
      // A converged state that fails a physical check keeps its numbers but not the status ok.
      const auto check = theory::check_fixed_point(fp, p.problem);
      if (check.verdict != theory::fixed_point_verdict::consistent) {
        r.status = check.verdict == theory::fixed_point_verdict::other_branch ? grid::status::other_branch
                                                                             : grid::status::unphysical;
        r.message = check.message;
      }
    }
    r.set("test_risk", fp.test_risk.value);
    r.set("test_risk_stderr", fp.test_risk.stderr);
    r.set("risk", fp.test_risk.value);
    r.set("risk_stderr", fp.test_risk.stderr);
    r.set("train_loss", fp.train_loss.value);
    r.set("train_loss_regularised", fp.train_loss_regularised);
    r.set_order_parameters(fp.order_parameters());
    r.set("V.kk", fp.state.V(0, 0));
    r.set("V.kv", 0.5 * (fp.state.V(0, 1) + fp.state.V(1, 0)));
    r.set("V.vv", fp.state.V(1, 1));
    const auto& h = fp.hats;
    // M̂ has the layout of M: [[m_kk, m_vk], [m_kv, m_vv]] (rows teacher, columns student).
    r.set("hat.m_kk", h.M_hat(0, 0));
    r.set("hat.m_vk", h.M_hat(0, 1));
    r.set("hat.m_kv", h.M_hat(1, 0));
    r.set("hat.m_vv", h.M_hat(1, 1));
    r.set("hat.q_kk", h.Q_hat(0, 0));
    r.set("hat.q_kv", h.Q_hat(0, 1));
    r.set("hat.q_vv", h.Q_hat(1, 1));
    r.set("hat.v_kk", h.V_hat(0, 0));
    r.set("hat.v_kv", h.V_hat(0, 1));
    r.set("hat.v_vv", h.V_hat(1, 1));
    r.set("iterations", fp.iterations);
    r.set("residual", fp.residual);
    r.set("nonpd_fraction", fp.nonpd_fraction);

    json extra;
    extra["start"] = start;
    extra["train_loss_stderr"] = finite_or_null(fp.train_loss.stderr);
    json repeats = json::array();
    for (const auto& rep : fp.repeats) {
      const auto op = rep.state.order_parameters();
      repeats.push_back({{"seed", rep.seed},
                         {"status", std::string(theory::solve_status_name(rep.status))},
                         {"iterations", rep.iterations},
                         {"residual", finite_or_null(rep.residual)},
                         {"test_risk", finite_or_null(rep.test_risk.value)},
                         {"test_risk_sample_stderr", finite_or_null(rep.test_risk.stderr)},
                         {"train_loss", finite_or_null(rep.train_loss)},
                         {"m_kk", op.m_kk}, {"m_vv", op.m_vv}, {"q_kk", op.q_kk}, {"q_vv", op.q_vv},
                         {"M_hat_stein_free", matrix_json(rep.M_hat_stein_free)},
                         {"M_hat_tilt_score", matrix_json(rep.M_hat_tilt_score)},
                         {"M_hat_difference_stderr", matrix_json(rep.M_hat_difference_stderr)},
                         {"nonpd_fraction", rep.nonpd_fraction},
                         {"channel_samples", rep.channel_samples},
                         {"prox_problems", rep.prox_problems},
                         {"newton_steps", rep.newton_steps},
                         {"accelerated_steps", rep.accelerated_steps},
                         {"acceleration_restarts", rep.acceleration_restarts},
                         {"channel_seconds", rep.channel_seconds}});
    }
    extra["repeat_solves"] = repeats; // not "repeats": that key is the option
    r.extra_json = extra.dump();
    return r;
  };
  m.cost_seconds = [](const grid::point& p) {
    // ~2 µs per sample with both prox starts at L = 3 (~1.2 µs with adaptive starts), cubic in L;
    // ~40 iterations per repeat with plain damping, ~15 with Anderson mixing at r_k >= 1. A weak
    // penalty on k needs more: measured over jobs/fig3_theory.toml (S = 8000, 3 repeats, Anderson;
    // r_v matters far less), the wall time per point is 0.43-0.61 s at r_k = 10 and 1, 1.9 s at 0.1,
    // 4.1 s at 0.01 and 4.8 s at 0.001: a factor about 1 + 3 log10(1/r_k) below 1. Linear attention
    // has its interpolation peak near α = 4 (docs/theory.md §6), where the weak-penalty iteration
    // runs 4× longer (jobs/fig3_theory_small.toml, linear: 305 and 500 iterations at α = 4,
    // r = 0.1 and 0.01, 24–145 at α = 2 and 8, 7–20 elsewhere): the excess is scaled by
    // 1 + 3 exp(−2 log2(α/4)²) there.
    const double L = p.problem.lengths.mean();
    const double r = p.r_k;
    double excess = r > 0 && r < 1 ? 3.0 * std::log10(1.0 / r) : (r > 0 ? 0.0 : 9.0);
    if (p.problem.activation.kind == model::activation_kind::linear && std::isfinite(p.alpha) && p.alpha > 0) {
      const double octaves = std::log2(p.alpha / 4.0);
      excess *= 1.0 + 3.0 * std::exp(-2.0 * octaves * octaves);
    }
    const double weak = 1.0 + excess;
    const double iterations = (option_text(p, "acceleration") == "none" ? 40.0 : 15.0) * weak;
    const double per_sample = option_text(p, "prox-starts") == "both" ? 2e-6 : 1.2e-6;
    return iterations * option_number(p, "repeats") * option_number(p, "samples") * per_sample * std::pow(L / 3.0, 3) +
           option_number(p, "repeats") * option_number(p, "test-samples") * 1e-7 * L;
  };
  m.memory_bytes = [](const grid::point& p) {
    const double L = static_cast<double>(p.problem.lengths.max_length());
    return static_cast<std::size_t>(std::max(option_number(p, "samples") * (L * 56.0 + 40.0),
                                             option_number(p, "test-samples") * (L * 24.0 + 32.0)));
  };
  return m;
}

} // namespace slr::methods::detail
