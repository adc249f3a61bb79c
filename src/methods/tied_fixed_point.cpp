// Method fixed-point of the tied-attention model: the replica-symmetric fixed point of ERM
// (slr/tied/theory.hpp), its overlaps, errors, rank and the spectrum of the estimator.
#include <algorithm>
#include <cmath>

#include "adapters.hpp"
#include "slr/model/random.hpp"
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

option_spec tied_hats_option() {
  std::vector<std::string> names;
  for (auto form : tied::all_hat_forms) names.emplace_back(tied::hat_form_name(form));
  option_spec spec{"hats", grid::value_type::choice, std::string(tied::hat_form_name(tied::hat_form::automatic)),
                   "conjugates m_hat, V_hat of the channel: stein (integration by parts; counts jumps between "
                   "competing prox minima), hessian (lower variance, smooth prox only), automatic (hessian at "
                   "delta = 0, stein otherwise); docs/theory.md T4",
                   names};
  // Added after archives of the model existed: at "automatic" a point keeps its identity.
  spec.omitted_when_default = true;
  return spec;
}

option_spec tied_qmc_points_option(bool omitted_when_default) {
  option_spec spec{"qmc-points", grid::value_type::integer, "16", "log2 of the scrambled Sobol points of the final phase",
                   {}, 4, 24};
  spec.omitted_when_default = omitted_when_default;
  return spec;
}

tied::theory_options tied_theory_options(const grid::point& p) {
  tied::theory_options options;
  options.log2_points = static_cast<int>(option_number(p, "qmc-points"));
  options.log2_points_coarse = std::min(12, options.log2_points);
  options.seed = p.seed;
  const auto hats = p.options.find("hats");
  options.hats = hats == p.options.end() ? tied::hat_form::automatic : tied::parse_hat_form(hats->second);
  return options;
}

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
      tied_qmc_points_option(false),
      {"tol", vt::real, "1e-07", "relative residual of the fixed-point map at which it stops", {}, 1e-14, 1},
      {"max-iter", vt::integer, "100", "map evaluations per phase (status not_converged beyond)", {}, 1, 1e5},
      tied_hats_option(),
  };
  // Per-d and per-sequence units throughout (docs/theory.md §T4).
  m.outputs = {
      {.name = "train_loss",
       .meaning = "training loss L(S_hat)/n = E ||sigma_beta(h(S_hat)) - Y||_F^2 per training sequence (no 1/2)"},
      {.name = "iterations", .meaning = "evaluations of the fixed-point map, coarse and final phase together"},
      {.name = "residual",
       .meaning = "relative residual |w (F(x) - x)| / |w F(x)| of the last map evaluation (compare with tol)"},
      {.name = "q", .meaning = "q = (1/d) ||S_hat||_F^2: squared norm of the estimator per dimension"},
      {.name = "m", .meaning = "m = (1/d) <S_hat, S*>: overlap of the estimator with the target"},
      {.name = "V", .meaning = "V > 0: the response of the estimator to its effective noise (replica-symmetric "
                               "variance; grows as 1/lambda where the estimator interpolates)"},
      {.name = "q_hat", .meaning = "conjugate q_hat of q (alpha included)"},
      {.name = "m_hat", .meaning = "conjugate m_hat of m (alpha included)"},
      {.name = "V_hat", .meaning = "conjugate V_hat of V (alpha included)"},
      {.name = "hat_m_rel_diff",
       .meaning = "(m_hat Stein - m_hat Hessian) / m_hat Stein at the last channel evaluation: nonzero where prox "
                  "minima compete"},
      {.name = "hat_V_rel_diff", .meaning = "(V_hat Stein - V_hat Hessian) / V_hat Stein, likewise"},
      {.name = "delta_eff",
       .meaning = "delta = sqrt(q_hat)/m_hat: noise level of the effective matrix-denoising problem Y = S* + delta G "
                  "(G a GOE with semicircle on [-2, 2])"},
      {.name = "eps", .meaning = "eps = 2 lambda / m_hat: the soft threshold on the eigenvalues of Y (0 for direct)"},
      {.name = "s", .meaning = "scale s of the estimator S_hat = s f(Y): m_hat/V_hat (PSD) or m_hat/(V_hat + 4 lambda) "
                               "(direct)"},
      {.name = "mse_s", .meaning = "(1/d) ||S_hat - S*||_F^2 = Q0 + q - 2m, Q0 = 1 + k0"},
      {.name = "test_clean",
       .meaning = "test error E ||sigma_beta(h(S_hat)) - sigma_beta0(h(S*))||_F^2 per fresh sequence, noiseless labels"},
      {.name = "test_noisy", .meaning = "the same test error against fresh noisy labels (what the paper plots)"},
      {.name = "objective_per_d2",
       .meaning = "the ERM objective / d^2: alpha train_loss + lambda (1/d) Tr S_hat (factorised, psd-nuclear) or "
                  "+ lambda q (direct)"},
      {.name = "rank_fraction", .meaning = "fraction of nonzero eigenvalues of S_hat (rank / d)"},
      {.name = "atom_at_0", .meaning = "1 - rank_fraction: mass of the zero eigenvalues of S_hat (0 for direct)"},
      {.name = "trace_per_d", .meaning = "(1/d) Tr S_hat"},
      {.name = "rank_capped",
       .meaning = "1 if the factorised width k < 1 caps the rank below the soft-threshold rank (top-kd eigenvalues "
                  "kept), else 0"},
      {.name = "frac_two_minima",
       .meaning = "fraction of the channel's QMC points whose prox has competing minima (last evaluation)"},
      {.name = "eig_quantiles",
       .meaning = "quantiles of the eigenvalue law of S_hat (d -> infinity, zero atom included) at levels 0, 0.01, "
                  "..., 1 (101 numbers)"},
      {.name = "eig_grid", .meaning = "200 equispaced eigenvalues over the continuous part of the law of S_hat"},
      {.name = "eig_density",
       .meaning = "density of the continuous part of the law of S_hat on eig_grid (integrates to 1 - atom_at_0)"},
      {.name = "eig_support", .meaning = "support of the continuous part: [lo, hi] intervals, increasing"},
      {.name = "target_grid", .meaning = "200 eigenvalues over the support of the target's law (sqrt(k0) times "
                                         "Marchenko-Pastur of ratio 1/k0)"},
      {.name = "target_density", .meaning = "density of the target's continuous part on target_grid (mass k0)"},
      {.name = "target_atom_at_0", .meaning = "mass 1 - k0 of the target's zero eigenvalues"},
  };
  m.solve = [](const grid::point& p, const run_context&) {
    auto options = tied_theory_options(p);
    options.tolerance = option_number(p, "tol");
    options.max_iterations = static_cast<int>(option_number(p, "max-iter"));
    const auto problem = tied_problem(p);
    auto r = tied::solve_theory(problem, options);
    std::string retried;
    // Near the interpolation threshold at small lambda the channel's prox has competing minima at
    // 1-5 % of the QMC points, and the sampled map jumps where one switches: for some scrambles the
    // iteration keeps crossing such a jump and stalls (residual 1e-5 .. 1e-2 after 300 evaluations),
    // while another scramble of the same size converges in ~60 (k0 = 0.5, Delta = 0.5, direct,
    // alpha = 0.316, lambda = 1e-4). The scramble is a nuisance of the quadrature, so a stalled solve
    // is repeated once on a second one, derived from the point's seed (deterministic).
    if (r.status == tied::theory_status::not_converged) {
      tied::theory_options second = options;
      second.seed = model::derive_seed(p.seed, 2);
      auto again = tied::solve_theory(problem, second);
      if (again.status == tied::theory_status::ok) {
        retried = "converged on a second Sobol scramble (the first stalled at residual " +
                  std::to_string(r.residual) + ")";
        again.seconds += r.seconds;
        r = std::move(again);
      }
    }
    grid::result_record record;
    switch (r.status) {
    case tied::theory_status::ok: record.status = grid::status::ok; break;
    case tied::theory_status::not_converged: record.status = grid::status::not_converged; break;
    case tied::theory_status::diverged: record.status = grid::status::diverged; break;
    }
    record.message = retried.empty() ? r.message : retried;
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
    // The target's own law (S* is known from k0 alone), so a figure draws it beside the estimator's.
    const auto target = tied::target_spectrum(problem.k0);
    extra["target_grid"] = numbers(target.grid);
    extra["target_density"] = numbers(target.density);
    extra["target_atom_at_0"] = target.atom_at_0;
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
