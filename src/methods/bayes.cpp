// Method "bayes": the Bayes risk Δ² + 1 − E[Σ p_l²] (docs/theory.md §3).
#include "adapters.hpp"
#include "slr/theory/population.hpp"

namespace slr::methods::detail {

method_descriptor describe_bayes() {
  method_descriptor m;
  m.name = "bayes";
  m.summary = "Bayes risk of the population problem (k*, v* known)";
  m.options = {samples_option("200000", 100)};
  m.outputs = {
      {.name = "risk", .meaning = "the Bayes risk E_Bayes = Delta^2 + 1 - E[sum_l p_l^2] (p_l the posterior of the "
                                  "hidden location; includes the label noise Delta^2), Monte Carlo over S samples"},
      {.name = "risk_stderr", .meaning = "Monte Carlo standard error of risk"},
      {.name = "bayes_risk", .meaning = "the same Bayes risk (the column every SLR method fills for comparison)"},
      {.name = "bayes_risk_stderr", .meaning = "Monte Carlo standard error of bayes_risk"},
  };
  m.solve = [](const grid::point& p, const run_context& context) {
    const theory::mc_settings mc{static_cast<std::size_t>(option_number(p, "samples")), p.seed, context.threads};
    const auto bayes = theory::bayes_risk(p.problem, mc);
    grid::result_record r;
    r.set("risk", bayes.value);
    r.set("risk_stderr", bayes.stderr);
    r.set("bayes_risk", bayes.value);
    r.set("bayes_risk_stderr", bayes.stderr);
    return r;
  };
  m.cost_seconds = [](const grid::point& p) {
    // Drawing the teacher fields dominates: ~0.11 µs per sample and token (fig2_population.toml,
    // S = 2·10⁵, L = 3: 0.061–0.10 s per point, spiked and max alike).
    return 1.1e-7 * option_number(p, "samples") * p.problem.lengths.mean();
  };
  m.memory_bytes = [](const grid::point& p) {
    return static_cast<std::size_t>(option_number(p, "samples") * (p.problem.lengths.max_length() * 24.0 + 32.0));
  };
  return m;
}

} // namespace slr::methods::detail
