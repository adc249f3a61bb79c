// Method erm of the tied-attention model: training at finite d (slr/tied_erm/measure.hpp) —
// L-BFGS for factorised and direct, proximal gradient with eigenvalue soft-thresholding for the
// convex psd-nuclear program — and its measurements on fresh test sequences.
#include <cmath>

#include "adapters.hpp"
#include "slr/tied_erm/measure.hpp"

namespace slr::methods::detail {

namespace {
tied_erm::erm_settings erm_settings_of(const grid::point& p) {
  tied_erm::erm_settings s;
  s.d = static_cast<std::size_t>(option_number(p, "d"));
  s.seed = p.seed;
  s.n_test = static_cast<std::size_t>(option_number(p, "test-samples"));
  s.solver.tolerance = option_number(p, "tol");
  s.solver.max_iterations = static_cast<std::size_t>(option_number(p, "max-iter"));
  s.solver.init_scale = option_number(p, "init-scale");
  s.solver.convex_start = option_text(p, "convex-start") == "yes";
  return s;
}

// All d eigenvalues up to this d; a histogram beyond (the JSON stays small).
constexpr std::size_t max_listed_eigenvalues = 400;
} // namespace

method_descriptor describe_tied_erm() {
  using vt = grid::value_type;
  method_descriptor m;
  m.model = "tied-attention";
  m.name = "erm";
  m.summary = "tied-attention ERM at finite d: test errors with standard errors, overlaps, rank, KKT residual, "
              "eigenvalues of the trained S";
  m.options = {
      {"test-samples", vt::integer, "4000", "fresh test sequences of the test errors", {}, 2000, 1e7},
      {"tol", vt::real, "1e-07", "L-BFGS relative gradient / APG relative step at which training stops", {}, 1e-14,
       1},
      {"max-iter", vt::integer, "20000", "optimiser iterations (status not_converged beyond)", {}, 1, 1e8},
      {"init-scale", vt::real, "1", "factorised start W_ij ~ eta N(0, 1): eta", {}, 1e-6, 1e3},
      // Measured at d = 100 (one thread): alpha = 4 14.1 s from a random start, 4.1 s from the convex
      // one; alpha = 0.5 5.1 s vs 1.4 s; alpha = 0.05 1.1 s vs 2.1 s; the same minimum (test errors
      // equal to 1e-7, KKT residuals below 1e-6).
      {"convex-start", vt::choice, "yes",
       "yes: factorised L-BFGS starts from the top eigenpairs of the convex (psd-nuclear) solution, the same "
       "minimum when rank <= k d, faster from alpha ~ 0.5 on; no: from random weights W_ij ~ eta N(0, 1)",
       {"no", "yes"}},
  };
  // Per sequence unless stated; test errors are means over test-samples fresh sequences.
  m.outputs = {
      {.name = "train_loss", .meaning = "training loss L(S_hat)/n of the trained form (seq2label: "
                                        "||sigma_beta(h(S_hat)) - Y||_F^2 per sequence, no 1/2)"},
      {.name = "D", .meaning = "token dimension d of the run"},
      {.name = "N", .meaning = "training sequences n = round(alpha d^2)"},
      {.name = "iterations", .meaning = "iterations of the optimiser (L-BFGS, or accelerated proximal gradient for "
                                        "psd-nuclear)"},
      {.name = "grad_evals", .meaning = "loss evaluations (with or without gradient) of the optimiser"},
      {.name = "rel_grad", .meaning = "the optimiser's stopping quantity at the end (relative gradient, or relative "
                                      "step of the proximal gradient; compare with tol)"},
      {.name = "q", .meaning = "q = (1/d) ||S_hat||_F^2"},
      {.name = "m", .meaning = "m = (1/d) <S_hat, S*>"},
      {.name = "target_q0", .meaning = "the drawn target's (1/d) Tr S*^2 (1 + k0 + 1/d on average)"},
      {.name = "mse_s", .meaning = "(1/d) ||S_hat - S*||_F^2"},
      {.name = "test_clean",
       .meaning = "test error ||sigma_beta(h(S_hat)) - sigma_beta0(h(S*))||_F^2 of the attention matrix, noiseless "
                  "labels (both label forms)"},
      {.name = "test_clean_stderr", .meaning = "standard error of test_clean (sample s.d./sqrt(test-samples))"},
      {.name = "test_noisy", .meaning = "the same test error against fresh noisy labels Y"},
      {.name = "test_noisy_stderr", .meaning = "standard error of test_noisy"},
      {.name = "objective_per_d2", .meaning = "(L(S_hat) + penalty) / d^2 of the trained form"},
      {.name = "trace_per_d", .meaning = "(1/d) Tr S_hat"},
      {.name = "rank_rel_1e3", .meaning = "fraction of eigenvalues of S_hat with |lambda| > 1e-3 max |lambda|"},
      {.name = "rank_rel_1e2", .meaning = "fraction of eigenvalues of S_hat with |lambda| > 1e-2 max |lambda|"},
      {.name = "kkt_residual",
       .meaning = "KKT residual of S_hat in the psd-nuclear program (factorised, psd-nuclear; NaN for direct)"},
      {.name = "optimiser_seconds", .meaning = "wall time of the optimisation alone (a measurement)", .unit = "s"},
      {.name = "eigenvalues", .meaning = "all d eigenvalues of S_hat, ascending",
       .condition = "d <= " + std::to_string(max_listed_eigenvalues)},
      {.name = "eigenvalue_histogram.edges", .meaning = "101 edges of 100 equal bins over [min, max] of the "
                                                        "eigenvalues of S_hat",
       .condition = "d > " + std::to_string(max_listed_eigenvalues)},
      {.name = "eigenvalue_histogram.counts", .meaning = "eigenvalues of S_hat in each bin",
       .condition = "d > " + std::to_string(max_listed_eigenvalues)},
  };
  m.solve = [](const grid::point& p, const run_context& context) {
    const auto problem = tied_problem(p);
    auto settings = erm_settings_of(p);
    (void)context;
    const auto r = tied_erm::run_erm(problem, settings);
    grid::result_record record;
    switch (r.optimiser.status) {
    case tied_erm::solver_status::converged: record.status = grid::status::ok; break;
    case tied_erm::solver_status::iteration_cap: record.status = grid::status::not_converged; break;
    case tied_erm::solver_status::stalled:
      // No further decrease within rounding: the minimum to working precision (solver.hpp).
      record.status = grid::status::ok;
      break;
    }
    record.message = r.optimiser.message;
    record.set("train_loss", r.train_loss);
    record.set("D", static_cast<double>(settings.d));
    record.set("N", static_cast<double>(r.n_train));
    record.set("iterations", static_cast<double>(r.optimiser.iterations));
    record.set("grad_evals", static_cast<double>(r.optimiser.evaluations));
    record.set("rel_grad", r.optimiser.relative_gradient);
    for (const auto& [name, value] :
         std::initializer_list<std::pair<const char*, double>>{{"q", r.q},
                                                               {"m", r.m},
                                                               {"target_q0", r.target_second_moment},
                                                               {"mse_s", r.mse_S},
                                                               {"test_clean", r.test_clean},
                                                               {"test_clean_stderr", r.test_clean_se},
                                                               {"test_noisy", r.test_noisy},
                                                               {"test_noisy_stderr", r.test_noisy_se},
                                                               {"objective_per_d2", r.objective_per_d2},
                                                               {"trace_per_d", r.trace_per_d},
                                                               {"rank_rel_1e3", r.rank_rel_1e3},
                                                               {"rank_rel_1e2", r.rank_rel_1e2},
                                                               {"kkt_residual", r.kkt_residual},
                                                               {"optimiser_seconds", r.optimiser.wall_seconds}})
      record.set_method_value(name, value);
    nlohmann::ordered_json extra;
    if (static_cast<std::size_t>(r.eigenvalues.size()) <= max_listed_eigenvalues) {
      auto values = nlohmann::ordered_json::array();
      for (Eigen::Index i = 0; i < r.eigenvalues.size(); ++i) values.push_back(r.eigenvalues[i]);
      extra["eigenvalues"] = values;
    } else {
      // 100 equal bins over [min, max]: edges and counts.
      const double lo = r.eigenvalues.minCoeff(), hi = r.eigenvalues.maxCoeff();
      std::vector<double> edges(101), counts(100, 0.0);
      for (int i = 0; i <= 100; ++i) edges[static_cast<std::size_t>(i)] = lo + (hi - lo) * i / 100.0;
      for (Eigen::Index i = 0; i < r.eigenvalues.size(); ++i) {
        const auto bin = hi > lo ? std::min<std::size_t>(99, static_cast<std::size_t>((r.eigenvalues[i] - lo) / (hi - lo) * 100))
                                 : 0;
        counts[bin] += 1;
      }
      extra["eigenvalue_histogram"] = {{"edges", edges}, {"counts", counts}};
    }
    record.extra_json = extra.dump();
    return record;
  };
  // Loss + gradient evaluations × 7e-10 s per unit of n T d² (the data passes), plus, for the PSD
  // programs, the d³ eigendecompositions of the proximal steps of the convex start. Evaluations
  // fall with α: direct ~20 + 15/√α, factorised ~32 + 20/α^0.9. Refitted to every ERM point of
  // jobs/tied_fig1_small.toml and tied_factorised_vs_direct_small.toml (d = 40, 60, α = 0.05 … 4:
  // direct 20–63 evaluations at 4.1–10e-10 s per unit, factorised 30–313 at 5.6–17e-10) and single
  // points at d = 100, α = 0.5 and 4 (5.3 and 12.1 s direct, 10.9 and 23.5 s factorised): every
  // point within 0.5–1.8× of this.
  m.cost_seconds = [](const grid::point& p) {
    const double d = option_number(p, "d");
    const double alpha = option_number(p, "alpha");
    const double n = std::max(1.0, std::round(alpha * d * d));
    const bool direct = option_text(p, "parametrisation") == "direct";
    const double evaluations = direct ? 20.0 + 15.0 / std::sqrt(alpha) : 32.0 + 20.0 / std::pow(alpha, 0.9);
    const double data = 7e-10 * evaluations * n * option_number(p, "T") * d * d;
    return 1e-3 + data + (direct ? 0.0 : 1.5e-6 * d * d * d);
  };
  m.memory_bytes = [](const grid::point& p) {
    return static_cast<std::size_t>(tied_erm::memory_estimate_bytes(tied_problem(p), erm_settings_of(p)));
  };
  m.validate = [](const grid::point& p) { erm_settings_of(p).validate(); };
  return m;
}

} // namespace slr::methods::detail
