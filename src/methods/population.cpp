// Method "population": the minimal population risk of the attention predictor over the
// manifold (docs/theory.md §2), with its minimiser, beside the Bayes risk on the same sample.
// With the option at = "m_kk=…,m_kv=…,…" it instead evaluates 𝓔(M, Q) at given order
// parameters (any of the 7; unspecified ones are 0), as needed for mismatched minima.
#include <cmath>
#include <stdexcept>

#include "adapters.hpp"
#include "slr/model/number_text.hpp"
#include "slr/theory/mismatched.hpp"
#include "slr/theory/population.hpp"

namespace slr::methods::detail {
namespace {
model::order_parameters parse_order_parameters(const std::string& text) {
  model::order_parameters op;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto comma = std::min(text.find(',', start), text.size());
    const auto item = text.substr(start, comma - start);
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("option 'at': expected name=value, got '" + item + "'");
    const auto name = item.substr(0, eq);
    // The whole value must be a number: trailing text would enter the point's identity unnoticed.
    const auto parsed = model::parse_number(item.substr(eq + 1));
    if (!parsed || !std::isfinite(*parsed))
      throw std::invalid_argument("option 'at': '" + item + "' has no finite numeric value");
    const double value = *parsed;
    double* slot = name == "m_kk" ? &op.m_kk : name == "m_kv" ? &op.m_kv : name == "m_vk" ? &op.m_vk
                 : name == "m_vv" ? &op.m_vv : name == "q_kk" ? &op.q_kk : name == "q_kv" ? &op.q_kv
                 : name == "q_vv" ? &op.q_vv : nullptr;
    if (slot == nullptr) throw std::invalid_argument("option 'at': unknown order parameter '" + name + "'");
    *slot = value;
    start = comma + 1;
  }
  if (!op.is_admissible()) throw std::invalid_argument("option 'at': Q - M^T M is not positive semi-definite");
  return op;
}
} // namespace

method_descriptor describe_population() {
  method_descriptor m;
  m.name = "population";
  m.summary = "minimal population risk of the attention predictor and its order parameters";
  m.options = {
      samples_option("200000", 100),
      {"cap", option_spec::value_type::real, "10000", "cap on |m_kk| and sqrt(R_kk); reaching it reports unbounded",
       {}, 1e-3, 1e12},
      {"at", option_spec::value_type::text, "", "evaluate the risk at these order parameters instead of minimising",
       {}},
  };
  {
    option_spec start{"start", option_spec::value_type::choice, "matched",
                      "matched: the minimal risk E; swapped: the mismatched minimum reached by descending all 7 order "
                      "parameters by their gradient flow from k = v*, v = k* (Fig 5; extra keys outcome, matched_risk)",
                      {"matched", "swapped"}};
    start.omitted_when_default = true; // points of existing archives keep their identities
    m.options.push_back(std::move(start));
  }
  {
    const std::string swapped = "start = swapped";
    m.outputs = {
        {.name = "risk",
         .meaning = "population risk E = E[(y - f(X))^2] (includes Delta^2; f = 0 has 1 + Delta^2): its minimum over "
                    "the symmetric manifold (matched start), the mismatched minimum reached from the swapped start, "
                    "or its value at the order parameters of `at`"},
        {.name = "risk_stderr", .meaning = "Monte Carlo standard error of risk (common random numbers)"},
    };
    for (auto& o : order_parameter_outputs("the minimiser (or of `at`)")) m.outputs.push_back(std::move(o));
    m.outputs.insert(m.outputs.end(), {
        {.name = "iterations",
         .meaning = "evaluations of the risk and its gradient by the minimisation, in whole-sample units",
         .condition = "without at"},
        {.name = "bayes_risk", .meaning = "the Bayes risk on the same Monte Carlo sample (docs/theory.md §3)"},
        {.name = "bayes_risk_stderr", .meaning = "Monte Carlo standard error of bayes_risk"},
        {.name = "outcome",
         .meaning = "how the descent from the swapped start ended: distinct (a minimum other than the matched "
                    "one), collapsed (back at the matched minimum), runaway (to the box, |k| -> infinity) or "
                    "not_converged (docs/theory.md §3b)",
         .condition = swapped},
        {.name = "matched_risk",
         .meaning = "the matched minimum E on the same sample, evaluated with the descent's estimator",
         .condition = swapped},
        {.name = "descended_risk", .meaning = "the risk at the end point of the flow itself", .condition = swapped},
        {.name = "gradient_norm",
         .meaning = "norm of the risk's gradient over the seven order parameters at the end point (coordinates held "
                    "at the box excluded)",
         .condition = swapped},
        {.name = "newton_step",
         .meaning = "length |H^-1 grad E| of the Newton step at the end point (free coordinates)",
         .condition = swapped},
        {.name = "hessian_min_eigenvalue",
         .meaning = "smallest eigenvalue of the risk's 7x7 Hessian at the end point (> 0 at a minimum)",
         .condition = swapped},
        {.name = "flow_time",
         .meaning = "total time t integrated of the flow d theta/dt = -grad E (natural units of the flow)",
         .condition = swapped},
        {.name = "flow_steps", .meaning = "accepted steps of the flow", .condition = swapped},
    });
  }
  // `at` is checked when the point is completed (plan time), not when a worker reaches it.
  m.validate = [](const grid::point& p) {
    if (const auto& at = option_text(p, "at"); !at.empty()) {
      (void)parse_order_parameters(at);
      if (option_text(p, "start") != "matched")
        throw std::invalid_argument("option 'start': a descent start makes no sense with 'at' (a fixed student)");
    }
  };
  m.solve = [](const grid::point& p, const run_context& context) {
    const theory::mc_settings mc{static_cast<std::size_t>(option_number(p, "samples")), p.seed, context.threads};
    grid::result_record r;
    const auto& at = option_text(p, "at");
    if (!at.empty()) {
      const auto op = parse_order_parameters(at);
      const auto risk = theory::population_risk(p.problem, op, mc);
      r.set("risk", risk.value);
      r.set("risk_stderr", risk.stderr);
      r.set_order_parameters(op);
    } else if (option_text(p, "start") == "swapped") {
      const auto beth = theory::minimise_from_swapped_start(p.problem, mc);
      r.set("risk", beth.risk.value);
      r.set("risk_stderr", beth.risk.stderr);
      r.set_order_parameters(beth.argmin);
      r.set("iterations", beth.evaluations);
      const auto outcome = theory::mismatched_outcome_name(beth.outcome);
      if (beth.outcome == theory::mismatched_outcome::runaway) r.status = grid::status::unbounded;
      if (beth.outcome == theory::mismatched_outcome::not_converged) r.status = grid::status::not_converged;
      r.message = "from the swapped start: " + beth.verdict;
      nlohmann::ordered_json extra;
      extra["outcome"] = std::string(outcome);
      extra["matched_risk"] = finite_or_null(beth.matched_risk_same_estimator);
      extra["descended_risk"] = finite_or_null(beth.descended_risk.value);
      extra["gradient_norm"] = finite_or_null(beth.gradient_norm);
      extra["newton_step"] = finite_or_null(beth.newton_step);
      extra["hessian_min_eigenvalue"] = finite_or_null(beth.hessian_eigenvalues[0]);
      extra["flow_time"] = finite_or_null(beth.flow_time);
      extra["flow_steps"] = beth.flow_steps;
      r.extra_json = extra.dump();
    } else {
      const auto minimum = theory::minimise_population_risk(p.problem, mc, {option_number(p, "cap")});
      r.set("risk", minimum.risk.value);
      r.set("risk_stderr", minimum.risk.stderr);
      r.set_order_parameters(minimum.argmin);
      r.set("iterations", minimum.evaluations);
      if (minimum.unbounded) {
        r.status = grid::status::unbounded;
        r.message = "the minimiser reached the cap on |k|: the risk is its limit as |k| -> infinity";
      }
    }
    const auto bayes = theory::bayes_risk(p.problem, mc);
    r.set("bayes_risk", bayes.value);
    r.set("bayes_risk_stderr", bayes.stderr);
    return r;
  };
  // Seconds per token (S·L) of a point, measured on the full-size Fig 5 job (S = 10⁵, L = 10, 26 ν
  // per task; means over the points of each activation, one worker per core): the matched minimum
  // (its starts screened on a subsample when S ≥ 2·screening_samples) and the swapped descent
  // (which includes a matched minimum). Linear attention's descent evaluates its risk in closed
  // form from the sample's moments, so its cost is the matched minimum's. Without screening the
  // matched minimum takes ~100 whole-sample evaluations instead of ~20 and the descent ~1500
  // instead of ~450. `at` evaluates once: the draw and one pass, ~2.5e-7 s per token.
  m.cost_seconds = [](const grid::point& p) {
    const double tokens = option_number(p, "samples") * p.problem.lengths.mean();
    if (!option_text(p, "at").empty()) return tokens * 2.5e-7;
    const bool screened = option_number(p, "samples") >= 2 * theory::minimisation_settings{}.screening_samples;
    struct per_token {
      double matched, swapped;
    };
    const auto c = [&]() -> per_token {
      switch (p.problem.activation.kind) {
      case model::activation_kind::softmax: return {0.47e-6, 2.9e-6};
      case model::activation_kind::linear: return {0.30e-6, 0.40e-6};
      case model::activation_kind::erf: return {0.61e-6, 9.3e-6};
      case model::activation_kind::softplus_kernel: return {0.74e-6, 6.7e-6};
      }
      return {0.74e-6, 9.3e-6};
    }();
    const bool linear = p.problem.activation.kind == model::activation_kind::linear;
    if (option_text(p, "start") == "swapped")
      return tokens * (screened ? c.swapped : (linear ? 5.0 : 3.3) * c.swapped);
    return tokens * (screened ? c.matched : 5.0 * c.matched);
  };
  m.memory_bytes = [](const grid::point& p) {
    return static_cast<std::size_t>(option_number(p, "samples") * (p.problem.lengths.max_length() * 40.0 + 32.0));
  };
  return m;
}

} // namespace slr::methods::detail
