// Method recovery-threshold of the tied-attention model: α_rec from the statistical dimension of
// the descent cone (slr/tied/thresholds.hpp), and optionally the interpolation threshold where the
// exponent of the RS fixed point's response crosses 1/2, located by bisection.
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
  m.options = {
      {"interpolation", vt::choice, "none",
       "rs: also locate the interpolation threshold by bisection on the fixed point (lambda -> 0 exponent)",
       {"none", "rs"}},
      {"alpha-lo", vt::real, "0.05", "lower end of the interpolation bracket", {}, 1e-6, 1e6},
      {"alpha-hi", vt::real, "1", "upper end of the interpolation bracket", {}, 1e-6, 1e6},
      {"alpha-tol", vt::real, "0.005", "width at which the bisection stops", {}, 1e-8, 1},
  };
  m.solve = [](const grid::point& p, const run_context&) {
    auto problem = tied_problem_without_alpha(p);
    const auto conic = tied::conic_threshold(problem);
    grid::result_record record;
    record.set_method_value("alpha_rec", conic.alpha_rec);
    record.set_method_value("stat_dim_per_d2", conic.stat_dim_per_d2);
    record.set_method_value("t_opt", conic.t_opt);
    record.set_method_value("alpha_interp_lower", conic.alpha_interp_lower);
    if (option_text(p, "interpolation") == "rs") {
      tied::theory_options options;
      options.spectrum = false;
      options.seed = p.seed;
      const auto rs = tied::rs_exponent_threshold(problem, 1e-3, 1e-4, option_number(p, "alpha-lo"),
                                                  option_number(p, "alpha-hi"), option_number(p, "alpha-tol"), options);
      record.set_method_value("alpha_interp", rs.alpha);
      record.set_method_value("alpha_interp_lo", rs.bracket_lo);
      record.set_method_value("alpha_interp_hi", rs.bracket_hi);
      record.set_method_value("fixed_points", rs.fixed_points);
    }
    return record;
  };
  // The conic statistical dimension alone is a fraction of a millisecond (0.13–0.3 ms per point
  // measured over the small tied jobs); the interpolation bisection solves the fixed point repeatedly.
  m.cost_seconds = [](const grid::point& p) { return option_text(p, "interpolation") == "rs" ? 60.0 : 2e-4; };
  m.memory_bytes = [](const grid::point&) { return std::size_t{1} << 20; };
  m.validate = [](const grid::point& p) {
    const auto problem = tied_problem_without_alpha(p);
    if (option_text(p, "interpolation") == "rs" && problem.T > tied::max_channel_T)
      throw std::invalid_argument("T: the interpolation threshold needs the replica-symmetric fixed point, "
                                  "implemented for T <= " + std::to_string(tied::max_channel_T));
  };
  return m;
}

} // namespace slr::methods::detail
