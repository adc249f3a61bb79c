// Method recovery-threshold of the tied-attention model: α_rec from the statistical dimension of
// the descent cone (slr/tied/thresholds.hpp), and optionally the interpolation threshold where the
// exponent of the RS fixed point's response crosses 1/2, located by bisection.
#include <algorithm>
#include <cmath>

#include "adapters.hpp"
#include "slr/tied/channel.hpp"
#include "slr/tied/thresholds.hpp"

namespace slr::methods::detail {

method_descriptor describe_tied_threshold() {
  using vt = grid::value_type;
  method_descriptor m;
  m.model = "tied-attention";
  m.name = "recovery-threshold";
  m.summary = "recovery threshold alpha_rec (conic statistical dimension) and, on request, the interpolation "
              "threshold of the RS fixed point";
  m.unused_model_parameters = {"d", "alpha", "lambda", "beta", "beta0", "k"};
  // The decade pairs of penalties whose crossings are extrapolated to lambda -> 0+ (added after
  // archives existed: at their defaults a point keeps its identity).
  option_spec lambda_max{"lambda-max", vt::real, "0.001",
                         "largest penalty of the decade pairs (lambda, lambda/10) whose exponent crossings are "
                         "extrapolated to lambda -> 0+", {}, 0, 1};
  lambda_max.minimum_exclusive = true;
  lambda_max.omitted_when_default = true;
  option_spec lambda_min{"lambda-min", vt::real, "1e-06",
                         "smallest penalty of the decade pairs (at most lambda-max/10)", {}, 0, 0.1};
  lambda_min.minimum_exclusive = true;
  lambda_min.omitted_when_default = true;
  m.options = {
      {"interpolation", vt::choice, "none",
       "rs: also locate the interpolation threshold by bisection on the fixed point (lambda -> 0 exponent)",
       {"none", "rs"}},
      {"alpha-lo", vt::real, "0.05", "lower end of the interpolation bracket", {}, 1e-6, 1e6},
      {"alpha-hi", vt::real, "1", "upper end of the interpolation bracket", {}, 1e-6, 1e6},
      {"alpha-tol", vt::real, "0.005", "width at which the bisection stops", {}, 1e-8, 1},
      lambda_max, lambda_min, tied_hats_option(), tied_qmc_points_option(true),
  };
  {
    const std::string rs = "interpolation = rs";
    m.outputs = {
        {.name = "alpha_rec",
         .meaning = "recovery threshold alpha_rec = (delta_sd/d^2)/(L - 1), L = T(T+1)/2 (Delta = 0, lambda -> 0+; "
                    "docs/theory.md §T5)"},
        {.name = "stat_dim_per_d2",
         .meaning = "statistical dimension delta_sd/d^2 of the descent cone of the PSD trace norm at S* (1/2 for "
                    "direct)"},
        {.name = "t_opt", .meaning = "the t minimising the PSD statistical-dimension formula (0 for direct)"},
        {.name = "alpha_interp_lower",
         .meaning = "lower end of the bracket of the interpolation threshold from the conic bound (PSD); alpha_rec "
                    "for direct"},
        {.name = "alpha_interp",
         .meaning = "interpolation threshold: the lambda -> 0+ extrapolation of the alphas where the RS response "
                    "exponent log(V(lambda2)/V(lambda1))/log(lambda1/lambda2) crosses 1/2",
         .condition = rs},
        {.name = "alpha_interp_uncertainty", .meaning = "half-width of the interval claimed for alpha_interp",
         .condition = rs},
        {.name = "alpha_interp_lo", .meaning = "alpha_interp - alpha_interp_uncertainty", .condition = rs},
        {.name = "alpha_interp_hi", .meaning = "alpha_interp + alpha_interp_uncertainty", .condition = rs},
        {.name = "alpha_interp_last", .meaning = "the crossing of the last (smallest) decade pair of penalties",
         .condition = rs},
        {.name = "alpha_interp_step_ratio",
         .meaning = "ratio r of the geometric extrapolation of the crossings (0 when not geometric)", .condition = rs},
        {.name = "fixed_points", .meaning = "RS fixed points solved by the bisections", .condition = rs},
        {.name = "alpha_interp_crossings",
         .meaning = "every crossing as a row [lambda1, lambda2, alpha], in decreasing lambda", .condition = rs},
        {.name = "alpha_interp_extrapolation",
         .meaning = "how alpha_interp was extrapolated: geometric, last-step or single", .condition = rs},
    };
  }
  m.solve = [](const grid::point& p, const run_context&) {
    auto problem = tied_problem_without_alpha(p);
    const auto conic = tied::conic_threshold(problem);
    grid::result_record record;
    record.set_method_value("alpha_rec", conic.alpha_rec);
    record.set_method_value("stat_dim_per_d2", conic.stat_dim_per_d2);
    record.set_method_value("t_opt", conic.t_opt);
    record.set_method_value("alpha_interp_lower", conic.alpha_interp_lower);
    if (option_text(p, "interpolation") == "rs") {
      auto options = tied_theory_options(p);
      options.spectrum = false;
      const auto rs = tied::rs_exponent_threshold_limit(problem, option_number(p, "lambda-max"),
                                                        option_number(p, "lambda-min"), option_number(p, "alpha-lo"),
                                                        option_number(p, "alpha-hi"), option_number(p, "alpha-tol"),
                                                        options);
      record.set_method_value("alpha_interp", rs.alpha);
      record.set_method_value("alpha_interp_uncertainty", rs.uncertainty);
      record.set_method_value("alpha_interp_lo", rs.alpha - rs.uncertainty);
      record.set_method_value("alpha_interp_hi", rs.alpha + rs.uncertainty);
      record.set_method_value("alpha_interp_last", rs.crossings.back().alpha);
      record.set_method_value("alpha_interp_step_ratio", rs.step_ratio);
      record.set_method_value("fixed_points", rs.fixed_points);
      nlohmann::ordered_json extra;
      auto crossings = nlohmann::ordered_json::array();
      for (const auto& c : rs.crossings) crossings.push_back({c.lambda1, c.lambda2, c.alpha});
      extra["alpha_interp_crossings"] = crossings;
      extra["alpha_interp_extrapolation"] = rs.extrapolation;
      record.extra_json = extra.dump();
    }
    return record;
  };
  // The conic statistical dimension alone is a fraction of a millisecond (0.13–0.3 ms per point
  // measured over the small tied jobs). The interpolation threshold bisects once per decade pair
  // (2 + log2(width/tol) exponents, the later pairs on a 2·rs_limit_bracket_step-wide bracket), each exponent solving the
  // fixed point at j + 2 penalties; a solve at λ ≤ 1e-3 near the threshold took 2–3 s (k0 = 0.5,
  // T = 2, Δ = 0.5: 69 solves in 324 s for 1e-3 → 1e-6 on a busy core).
  m.cost_seconds = [](const grid::point& p) {
    if (option_text(p, "interpolation") != "rs") return 2e-4;
    const double pairs = std::max(1.0, std::floor(std::log10(option_number(p, "lambda-max") /
                                                             option_number(p, "lambda-min")) + 1e-9));
    const double tol = option_number(p, "alpha-tol");
    const double first = 2 + std::ceil(std::log2((option_number(p, "alpha-hi") - option_number(p, "alpha-lo")) / tol));
    const double later = 2 + std::ceil(std::log2(2 * tied::rs_limit_bracket_step / tol));
    double solves = 0;
    for (int j = 0; j < static_cast<int>(pairs); ++j) solves += (j == 0 ? first : later) * (j + 2);
    const double final_points = std::ldexp(1.0, static_cast<int>(option_number(p, "qmc-points")) - 16);
    return (0.5 + 2.0 * final_points) * solves * std::pow(4.0, option_number(p, "T") - 2);
  };
  m.memory_bytes = [](const grid::point&) { return std::size_t{1} << 20; };
  m.validate = [](const grid::point& p) {
    const auto problem = tied_problem_without_alpha(p);
    if (option_text(p, "interpolation") == "rs" && !(option_number(p, "lambda-min") <= option_number(p, "lambda-max") / 10))
      throw std::invalid_argument("lambda-min: must be at most lambda-max/10 (one decade pair at least)");
    if (option_text(p, "interpolation") == "rs" && problem.T > tied::max_channel_T)
      throw std::invalid_argument("T: the interpolation threshold needs the replica-symmetric fixed point, "
                                  "implemented for T <= " + std::to_string(tied::max_channel_T));
  };
  return m;
}

} // namespace slr::methods::detail
