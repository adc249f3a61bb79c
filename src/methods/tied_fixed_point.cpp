// Method fixed-point of the tied-attention model: the replica-symmetric fixed point of ERM
// (slr/tied/theory.hpp), its overlaps, errors, rank and the spectrum of the estimator.
#include <cmath>

#include "adapters.hpp"
#include "slr/tied/channel.hpp"
#include "slr/tied/theory.hpp"

namespace slr::methods::detail {

namespace {
// A parameter the method does not take (e.g. k for the threshold) keeps tied::problem's default.
double number_or(const grid::point& p, const char* name, double fallback) {
  const auto it = p.options.find(name);
  return it == p.options.end() ? fallback : std::stod(it->second);
}

tied::problem problem_of(const grid::point& p, bool with_alpha) {
  tied::problem problem;
  problem.T = static_cast<int>(option_number(p, "T"));
  problem.alpha = with_alpha ? option_number(p, "alpha") : 1.0;
  problem.k0 = option_number(p, "k0");
  problem.k = number_or(p, "k", problem.k);
  problem.lambda = number_or(p, "lambda", problem.lambda);
  problem.delta = option_number(p, "delta");
  problem.beta = number_or(p, "beta", problem.beta);
  problem.beta0 = number_or(p, "beta0", problem.beta0);
  problem.param = tied::parse_parametrisation(option_text(p, "parametrisation"));
  problem.labels = tied::parse_label_form(option_text(p, "labels"));
  problem.validate();
  return problem;
}
} // namespace

tied::problem tied_problem(const grid::point& p) { return problem_of(p, true); }
tied::problem tied_problem_without_alpha(const grid::point& p) { return problem_of(p, false); }

namespace {
nlohmann::ordered_json numbers(const std::vector<double>& values) {
  auto out = nlohmann::ordered_json::array();
  for (double x : values) out.push_back(finite_or_null(x));
  return out;
}
} // namespace

method_descriptor describe_tied_fixed_point() {
  using vt = grid::value_type;
  method_descriptor m;
  m.model = "tied-attention";
  m.name = "fixed-point";
  m.summary = "replica-symmetric fixed point of tied-attention ERM: q, m, V, test and training errors, rank, spectrum";
  m.unused_model_parameters = {"d"}; // the d -> infinity limit
  m.options = {
      {"qmc-points", vt::integer, "16", "log2 of the scrambled Sobol points of the final phase", {}, 4, 24},
      {"tol", vt::real, "1e-07", "relative residual of the fixed-point map at which it stops", {}, 1e-14, 1},
      {"max-iter", vt::integer, "100", "map evaluations per phase (status not_converged beyond)", {}, 1, 1e5},
  };
  m.solve = [](const grid::point& p, const run_context&) {
    tied::theory_options options;
    options.log2_points = static_cast<int>(option_number(p, "qmc-points"));
    options.log2_points_coarse = std::min(12, options.log2_points);
    options.tolerance = option_number(p, "tol");
    options.max_iterations = static_cast<int>(option_number(p, "max-iter"));
    options.seed = p.seed;
    const auto r = tied::solve_theory(tied_problem(p), options);
    grid::result_record record;
    switch (r.status) {
    case tied::theory_status::ok: record.status = grid::status::ok; break;
    case tied::theory_status::not_converged: record.status = grid::status::not_converged; break;
    case tied::theory_status::diverged: record.status = grid::status::diverged; break;
    }
    record.message = r.message;
    record.set("train_loss", r.train_loss);
    record.set("iterations", r.iterations_coarse + r.iterations);
    record.set("residual", r.residual);
    for (const auto& [name, value] :
         std::initializer_list<std::pair<const char*, double>>{{"q", r.x.q},
                                                               {"m", r.x.m},
                                                               {"V", r.x.V},
                                                               {"q_hat", r.hats.q_hat},
                                                               {"m_hat", r.hats.m_hat},
                                                               {"V_hat", r.hats.V_hat},
                                                               {"hat_m_rel_diff", r.hat_m_rel_diff},
                                                               {"hat_V_rel_diff", r.hat_V_rel_diff},
                                                               {"delta_eff", r.delta},
                                                               {"eps", r.eps},
                                                               {"s", r.scale},
                                                               {"mse_s", r.mse_S},
                                                               {"test_clean", r.test_clean},
                                                               {"test_noisy", r.test_noisy},
                                                               {"objective_per_d2", r.objective_per_d2},
                                                               {"rank_fraction", r.rank_fraction},
                                                               {"atom_at_0", r.atom_at_0},
                                                               {"trace_per_d", r.trace_per_d},
                                                               {"rank_capped", r.rank_capped ? 1.0 : 0.0},
                                                               {"frac_two_minima", r.frac_two_minima}})
      record.set_method_value(name, value);
    // The spectrum of the estimator: arrays, in the JSON extras (quantiles at 0, 0.01, …, 1; the
    // density of the continuous part on 200 points; the support intervals).
    nlohmann::ordered_json extra;
    extra["eig_quantiles"] = numbers(r.spectrum.quantiles);
    extra["eig_grid"] = numbers(r.spectrum.grid);
    extra["eig_density"] = numbers(r.spectrum.density);
    auto support = nlohmann::ordered_json::array();
    for (const auto& piece : r.spectrum.support) support.push_back({piece.lo, piece.hi});
    extra["eig_support"] = support;
    record.extra_json = extra.dump();
    return record;
  };
  // Measured at T = 2 inside sweeps on 2 busy cores: 0.45 s per point with 2^14 final QMC points,
  // 0.85 s with 2^16 (tests/bench/bench_tied_theory, one free core: 0.34-0.54 s); the coarse phase
  // (2^12 points) is a fixed part. The channel has 2^T prox starts per point.
  m.cost_seconds = [](const grid::point& p) {
    const double T = option_number(p, "T");
    const double final_points = std::ldexp(1.0, static_cast<int>(option_number(p, "qmc-points")) - 16);
    return (0.3 + 0.5 * final_points) * std::pow(4.0, T - 2);
  };
  m.memory_bytes = [](const grid::point& p) {
    return static_cast<std::size_t>(std::ldexp(64.0, static_cast<int>(option_number(p, "qmc-points"))) *
                                    option_number(p, "T") * option_number(p, "T"));
  };
  m.validate = [](const grid::point& p) {
    const auto problem = tied_problem(p);
    if (problem.T > tied::max_channel_T)
      throw std::invalid_argument("T: the replica-symmetric fixed point is implemented for T <= " +
                                  std::to_string(tied::max_channel_T) + " (ERM takes T up to " +
                                  std::to_string(tied::max_tokens) + ")");
  };
  return m;
}

} // namespace slr::methods::detail
