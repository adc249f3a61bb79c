// The mismatched minimum ℶ_σ (docs/theory.md §3b): closed forms at the pure swap point, the
// analytic gradient, the mirror symmetry, E_softmax = Bayes on the same sample, and the reference
// cases of tests/reference/mismatched.json away from the end of the branch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "slr/theory/mismatched.hpp"
#include "slr/theory/population.hpp"

namespace slr::theory {
namespace {

model::problem make(const std::string& task, double nu, std::size_t L, const std::string& activation) {
  model::problem p;
  p.task = model::task(task == "spiked" ? model::task_kind::spiked : model::task_kind::max, nu);
  p.lengths = model::length_law::fixed(L);
  p.activation.kind = model::activation_spec::parse_kind(activation);
  return p;
}

TEST(Mismatched, PureSwapPointClosedForms) {
  // θ_sw = (0, d, c, 0, 0, 0, 0): χ_l = c z*_l, z_l = d χ*_l; L = 10 (docs/theory.md §3b).
  struct closed_form {
    const char* task;
    double nu;
    const char* activation;
    double c, d, exact;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const closed_form cases[] = {
      {"spiked", 4, "softmax", 1, 1, 0.95027}, {"spiked", 4, "erf", 1, 1, 18.89795}, {"spiked", 4, "linear", 1, 1, 25},
      {"spiked", 4, "softmax", 2, 0.4, 0.89211}, {"spiked", 4, "erf", 2, 0.4, 3.59777},
      {"spiked", 4, "linear", 2, 0.4, 9},       {"max", inf, "softmax", 2, 0.4, 0.89545},
      {"max", inf, "erf", 2, 0.4, 2.78902},     {"max", inf, "linear", 2, 0.4, 6.53738},
  };
  for (const auto& k : cases) {
    const auto problem = make(k.task, k.nu, 10, k.activation);
    const mc_settings mc{200000, 11, 0};
    const std::array<double, 7> swap{0, k.d, k.c, 0, 0, 0, 0};
    const double value = seven_parameter_risk(problem, mc, swap, nullptr);
    // With R = 0 the descent's objective is the population risk of §2, sample for sample.
    const auto reference = population_risk(problem, order_parameters_of(swap), mc);
    EXPECT_NEAR(value, reference.value, 1e-9 * std::max(1.0, std::abs(value))) << k.task << " " << k.activation;
    EXPECT_NEAR(value, k.exact, 3 * reference.stderr + 1e-5) << k.task << " " << k.activation << " c=" << k.c;
  }
}

TEST(Mismatched, LinearAttentionRunsOffToTheBilinearLimitInBothTasks) {
  // L = 10. From the swapped start linear attention descends toward |k| → ∞, |v| → 0 in both
  // tasks (a gradient flow of the same objective, integrated independently, does so with the risk
  // still falling at |k| = 20); ℶ is the minimum of the bilinear limit Σ_l χ_l z_l, which for
  // spiked-SLR is L/(L + ν) (docs/theory.md §3b). No end point that is still descending is a
  // distinct minimum (max-SLR ν = 10 stopped at m_kv = 37.9 with |∇𝓔| = 2e-4 and was one).
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& [task, nu] : std::vector<std::pair<std::string, double>>{
           {"spiked", 2}, {"spiked", 10}, {"spiked", 30}, {"max", 2}, {"max", 10}, {"max", inf}}) {
    const auto problem = make(task, nu, 10, "linear");
    const auto r = minimise_from_swapped_start(problem, {60000, 3, 0});
    const std::string label = task + " nu=" + std::to_string(nu);
    EXPECT_EQ(mismatched_outcome_name(r.outcome), "runaway") << label << " gradient " << r.gradient_norm;
    EXPECT_GT(r.risk.value, r.matched.risk.value + (task == "max" ? 0.05 : 0.0)) << label; // above E: not collapsed
    EXPECT_LE(r.risk.value, r.descended_risk.value + 1e-3) << label;        // the limit lies below the walk
    if (task == "spiked") {
      EXPECT_NEAR(r.risk.value, 10.0 / (10.0 + nu), 4 * r.risk.stderr + 1e-3) << label;
    }
  }
  // A descent that comes to rest far out on the runaway path, gradient below the tolerance
  // (max-SLR ν = 10^1.1, seed of the Fig 5 job: m_kv* = 39.1, |v-side| = 0.004, |∇𝓔| = 4e-5), is a
  // runaway with the limit's risk, not a distinct minimum.
  {
    const auto r = minimise_from_swapped_start(make("max", 12.589254117941675, 10, "linear"),
                                               {100000, 17135976671694132084ULL, 0});
    EXPECT_EQ(mismatched_outcome_name(r.outcome), "runaway") << "gradient " << r.gradient_norm;
    EXPECT_LE(r.risk.value, r.descended_risk.value + 1e-3);
    EXPECT_GT(r.risk.value, r.matched.risk.value + 0.05);
  }
  // Below the branch (small ν) the swapped start falls back to the matched minimum.
  for (const char* task : {"spiked", "max"}) {
    const auto r = minimise_from_swapped_start(make(task, 0.1, 10, "linear"), {60000, 3, 0});
    EXPECT_EQ(mismatched_outcome_name(r.outcome), "collapsed") << task;
  }
}

TEST(Mismatched, LinearRunawayLimitHasItsClosedForm) {
  // ℶ_lin = 1 − μ_ε²/C₂ (docs/theory.md §3b): in max-SLR C₂ = L, and ℶ_lin − E_lin = 1/L exactly;
  // at L = 10, ℶ_lin = 0.85122 (ν = 2) and 0.76322 (ν = ∞). The difference ℶ − E is taken on one
  // sample (common random numbers), its error bounded by the sum of the two standard errors.
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& [nu, closed] : std::vector<std::pair<double, double>>{{2.0, 0.85122}, {inf, 0.76322}}) {
    const auto r = minimise_from_swapped_start(make("max", nu, 10, "linear"), {100000, 5, 0});
    const std::string label = "max nu=" + std::to_string(nu);
    ASSERT_EQ(mismatched_outcome_name(r.outcome), "runaway") << label << ": " << r.verdict;
    EXPECT_NEAR(r.risk.value, closed, 4 * r.risk.stderr) << label;
    EXPECT_NEAR(r.risk.value - r.matched.risk.value, 0.1, 4 * (r.risk.stderr + r.matched.risk.stderr)) << label;
  }
}

TEST(Mismatched, LinearAttentionNearItsThresholdRunsAway) {
  // Just above the threshold (L = 10: max-SLR ν ≈ 0.9, spiked ν ≈ 0.5) the flow from the swapped
  // start runs off to |k| → ∞ while a quasi-Newton line search can jump into the matched basin,
  // whose risk is lower: the class is the flow's. Below the threshold it collapses.
  for (const auto& [task, nu, expected] : std::vector<std::tuple<std::string, double, std::string>>{
           {"max", 1.1, "runaway"}, {"spiked", 0.6, "runaway"}, {"max", 0.7, "collapsed"}, {"spiked", 0.4, "collapsed"}}) {
    const auto r = minimise_from_swapped_start(make(task, nu, 10, "linear"), {60000, 3, 0});
    const std::string label = task + " nu=" + std::to_string(nu);
    EXPECT_EQ(mismatched_outcome_name(r.outcome), expected) << label << ": " << r.verdict;
    if (expected == "runaway") {
      EXPECT_GT(r.risk.value, r.matched.risk.value + 0.05) << label;
      if (task == "spiked") {
        EXPECT_NEAR(r.risk.value, 10.0 / (10.0 + nu), 4 * r.risk.stderr) << label;
      }
    }
  }
}

TEST(Mismatched, ShallowDistinctMinimumIsDistinct) {
  // erf, max-SLR, ν = ∞, L = 10: a distinct minimum whose Hessian's smallest eigenvalue is ≈ 2e-3,
  // reached slowly (at |∇𝓔| ≈ 1e-4 the descent is still moving). An independent computation finds
  // it at ℶ = 0.8975 ± 0.0013; the flow must converge to it and classify it by its Hessian.
  const auto r = minimise_from_swapped_start(make("max", std::numeric_limits<double>::infinity(), 10, "erf"),
                                             {100000, 3, 0});
  ASSERT_EQ(mismatched_outcome_name(r.outcome), "distinct") << r.verdict;
  EXPECT_LT(r.newton_step, 1e-6);
  EXPECT_GT(r.hessian_eigenvalues[0], 5e-4);
  EXPECT_LT(r.hessian_eigenvalues[0], 1e-2);
  EXPECT_NEAR(r.risk.value, 0.8975, 4 * std::hypot(r.risk.stderr, 0.0013));
  EXPECT_GT(std::abs(r.argmin.m_kv), 1.0); // k mostly along v*
}

TEST(Mismatched, TheBalancedGaugeLeavesTheBilinearRiskUnchanged) {
  // (k, v) → (s k, v/s) changes σ = 1 + χ's risk through Σ_l z_l/s but not the bilinear part: at
  // k-side × 1e4 the risk of a point and of its balanced copy agree to the O(1/s) of that term.
  const auto problem = make("max", 4, 10, "linear");
  const mc_settings mc{20000, 9, 0};
  const std::array<double, 7> theta{0.3, 0.05, 2.5, 0.02, -0.1, 0.01, 0.003};
  const auto balanced = balanced_gauge(theta);
  double k = 0, v = 0;
  for (const std::size_t i : {0u, 2u, 4u}) k += balanced[i] * balanced[i];
  for (const std::size_t i : {1u, 3u, 5u, 6u}) v += balanced[i] * balanced[i];
  EXPECT_NEAR(k, v, 1e-12 * k);
  const auto far = [](std::array<double, 7> x) {
    for (const std::size_t i : {0u, 2u, 4u}) x[i] *= 1e4;
    for (const std::size_t i : {1u, 3u, 5u, 6u}) x[i] /= 1e4;
    return x;
  };
  const double a = seven_parameter_risk(problem, mc, far(theta), nullptr);
  const double b = seven_parameter_risk(problem, mc, far(balanced), nullptr);
  EXPECT_NEAR(a, b, 1e-3 * std::abs(a));
  EXPECT_GT(std::abs(seven_parameter_risk(problem, mc, theta, nullptr) - seven_parameter_risk(problem, mc, balanced, nullptr)),
            1e-3); // σ = 1 + χ itself has no flat orbit
}

TEST(Mismatched, AnalyticGradientMatchesFiniteDifferences) {
  for (const char* activation : {"softmax", "linear", "erf", "softplus-kernel"}) {
    const auto problem = make("spiked", 2, 3, activation);
    const mc_settings mc{4000, 5, 1};
    const std::array<double, 7> theta{0.7, 0.3, -0.2, 0.8, 0.4, 0.25, 0.3};
    std::array<double, 7> gradient{};
    (void)seven_parameter_risk(problem, mc, theta, &gradient);
    for (std::size_t k = 0; k < 7; ++k) {
      auto plus = theta, minus = theta;
      const double h = 1e-5;
      plus[k] += h;
      minus[k] -= h;
      const double fd = (seven_parameter_risk(problem, mc, plus, nullptr) - seven_parameter_risk(problem, mc, minus, nullptr)) / (2 * h);
      EXPECT_NEAR(gradient[k], fd, 1e-6 * std::max(1.0, std::abs(fd))) << activation << " θ_" << k;
    }
  }
}

TEST(Mismatched, LinearClosedFormEqualsTheSampleBySampleSum) {
  // Linear attention: 𝓔 and its gradient from the sample's moments against the per-sample sum,
  // at interior points and at the descent's box (|θ_i| = 40), fixed and pmf lengths, both tasks.
  const std::array<std::array<double, 7>, 4> thetas{{{0.7, 0.3, -0.2, 0.8, 0.4, 0.25, 0.3},
                                                     {0, 1, 1, 0, 0, 0, 0},
                                                     {40, -0.01, 3, 0.02, 40, -0.5, 12},
                                                     {-13, 7, 40, -40, 0.1, 25, -3}}};
  for (const char* task : {"spiked", "max"}) {
    auto problem = make(task, 2, 3, "linear");
    for (const bool pmf : {false, true}) {
      if (pmf) problem.lengths = model::length_law::parse("1:0.25,3:0.5,10:0.25");
      const mc_settings mc{3000, 17, 2};
      for (const auto& theta : thetas) {
        std::array<double, 7> closed{}, direct{};
        const double a = seven_parameter_risk(problem, mc, theta, &closed, risk_evaluation::moments);
        const double b = seven_parameter_risk(problem, mc, theta, &direct, risk_evaluation::per_sample);
        EXPECT_NEAR(a, b, 1e-12 * std::abs(b)) << task << " pmf " << pmf << " θ_0 " << theta[0];
        double scale = 0;
        for (double v : direct) scale = std::max(scale, std::abs(v));
        for (std::size_t k = 0; k < 7; ++k)
          EXPECT_NEAR(closed[k], direct[k], 1e-12 * scale) << task << " pmf " << pmf << " ∂θ_" << k;
        EXPECT_EQ(seven_parameter_risk(problem, mc, theta, nullptr), a); // what the descent uses
      }
    }
  }
  EXPECT_THROW((void)seven_parameter_risk(make("spiked", 2, 3, "softmax"), {1000, 1, 1}, thetas[0], nullptr,
                                          risk_evaluation::moments),
               std::invalid_argument);
}

TEST(Mismatched, MirrorSymmetryAndSoftmaxAttainsBayes) {
  // (v, v*) → (−v, −v*): θ → (m_kk, −m_vk, −m_kv, m_vv, a, −b, c) leaves 𝓔 unchanged in law.
  const auto problem = make("spiked", 4, 10, "softmax");
  const mc_settings mc{100000, 3, 0};
  const std::array<double, 7> theta{0.5, 0.6, 0.4, 0.3, 0.1, 0.2, 0.1};
  const std::array<double, 7> mirror{0.5, -0.6, -0.4, 0.3, 0.1, -0.2, 0.1};
  const auto a = population_risk(problem, order_parameters_of(theta), mc);
  const double b = seven_parameter_risk(problem, mc, mirror, nullptr);
  EXPECT_NEAR(seven_parameter_risk(problem, mc, theta, nullptr), b, 4 * a.stderr);
  const auto bayes = bayes_risk(problem, mc);
  const auto matched = minimise_population_risk(problem, mc);
  EXPECT_NEAR(matched.risk.value, bayes.value, 2e-3);
}

TEST(Mismatched, SwappedStartFallsBackToTheMatchedMinimum) {
  // Max-SLR, L = 3: linear attention below its threshold (ν ≈ 3.3) collapses, above it runs away
  // (docs/theory.md §3b). Softmax at ν = ∞: the matched minimum lies at |k| → ∞, and the flow
  // ends on the box along it.
  const mc_settings mc{20000, 2024, 0};
  {
    const auto r = minimise_from_swapped_start(make("max", 2, 3, "linear"), mc);
    EXPECT_EQ(mismatched_outcome_name(r.outcome), "collapsed") << r.verdict;
    EXPECT_NEAR(r.theta[0], r.matched.argmin.m_kk, 0.03);      // m_kk of the flow's own end point
    EXPECT_NEAR(r.theta[2], 0.0, 0.03);                        // m_kv
    EXPECT_NEAR(r.descended_risk.value, r.matched_risk_same_estimator, 2e-4);
    EXPECT_DOUBLE_EQ(r.argmin.m_kk, r.matched.argmin.m_kk);
  }
  {
    const auto r = minimise_from_swapped_start(make("max", 30, 3, "linear"), mc);
    EXPECT_EQ(mismatched_outcome_name(r.outcome), "runaway") << r.verdict;
    EXPECT_NEAR(r.risk.value - r.matched.risk.value, 1.0 / 3, 4 * (r.risk.stderr + r.matched.risk.stderr));
  }
  {
    const auto r = minimise_from_swapped_start(make("max", std::numeric_limits<double>::infinity(), 3, "softmax"), mc);
    EXPECT_EQ(mismatched_outcome_name(r.outcome), "collapsed");
    EXPECT_TRUE(r.matched.unbounded);
    EXPECT_TRUE(r.matched_in_box.unbounded);
    EXPECT_NEAR(r.theta[0], 40.0, 1e-9);
    EXPECT_NEAR(r.descended_risk.value, r.matched_risk_same_estimator, 2e-4);
    EXPECT_LT(r.matched.risk.value, r.risk.value); // E_σ itself is the |k| → ∞ limit, below the box
  }
}

double nu_of(const nlohmann::json& e) {
  return e["nu"].is_string() ? std::numeric_limits<double>::infinity() : e["nu"].get<double>();
}

struct reference_case {
  nlohmann::json entry;
  bool away_from_branch_end = true;
};

std::vector<reference_case> reference_cases() {
  std::ifstream in(std::string(SLR_REFERENCE_DIR) + "/mismatched.json");
  const auto all = nlohmann::json::parse(in)["entries"];
  // The branch end ν_c lies between the last ν that collapses and the first that is distinct (per
  // task, L, activation); cases within 0.3 of that bracket can flip with the sample.
  std::map<std::string, std::vector<std::pair<double, std::string>>> series;
  for (const auto& e : all)
    series[e["task"].get<std::string>() + std::to_string(e["L"].get<int>()) + e["activation"].get<std::string>()]
        .emplace_back(nu_of(e), e["Beth_status"].get<std::string>().substr(0, 4));
  std::vector<reference_case> out;
  for (const auto& e : all) {
    reference_case c{e};
    const auto& s = series[e["task"].get<std::string>() + std::to_string(e["L"].get<int>()) + e["activation"].get<std::string>()];
    const double nu = nu_of(e);
    for (std::size_t i = 0; i + 1 < s.size(); ++i)
      if (s[i].second != s[i + 1].second) {
        const double lo = std::min(s[i].first, s[i + 1].first), hi = std::max(s[i].first, s[i + 1].first);
        if (nu >= lo - 0.3 && nu <= hi + 0.3 && (std::abs(nu - lo) < 0.3 || std::abs(nu - hi) < 0.3))
          c.away_from_branch_end = false;
      }
    out.push_back(c);
  }
  return out;
}

// `seeds` independent samples (seeds 2024, 2025, …); their mean is compared, as the reference
// quotes the mean of two samples.
void check_case(const nlohmann::json& e, std::size_t samples, int seeds = 1) {
  std::string activation = e["activation"];
  if (activation == "softplus") activation = "softplus-kernel";
  const double nu = nu_of(e);
  auto problem = make(e["task"], nu, e["L"].get<std::size_t>(), activation);
  problem.activation.erf_offset = e["c"].get<double>();
  const std::string status = e["Beth_status"];
  const std::string label = e["task"].get<std::string>() + " nu=" + std::to_string(nu) + " L=" +
                            std::to_string(e["L"].get<int>()) + " " + activation;
  const std::string expected = status.starts_with("runaway") ? "runaway" : status.starts_with("distinct") ? "distinct" : "collapsed";
  double risk = 0, stderr_sum = 0, m_kk = 0, m_vv = 0, m_kv = 0, m_vk = 0;
  for (int k = 0; k < seeds; ++k) {
    const auto result = minimise_from_swapped_start(problem, {samples, 2024u + static_cast<std::uint64_t>(k), 0});
    EXPECT_EQ(mismatched_outcome_name(result.outcome), expected) << label << ": risk " << result.risk.value;
    if (expected == "runaway" && e["Beth_closed_runaway_limit"].is_number()) {
      // ℶ is the minimum of the bilinear limit on this sample: the closed form within its error.
      EXPECT_NEAR(result.risk.value, e["Beth_closed_runaway_limit"].get<double>(), 4 * result.risk.stderr + 1e-3)
          << label;
    }
    risk += result.risk.value / seeds;
    stderr_sum += result.risk.stderr;
    // The mirror pair has equal risk: compare the entries whose sign the symmetry keeps, and the
    // others up to sign.
    m_kk += result.argmin.m_kk / seeds;
    m_vv += result.argmin.m_vv / seeds;
    m_kv += std::abs(result.argmin.m_kv) / seeds;
    m_vk += std::abs(result.argmin.m_vk) / seeds;
  }
  // Standard error of the mean of `seeds` independent estimates.
  const double ours = stderr_sum / seeds / std::sqrt(static_cast<double>(seeds));
  const double error = 3 * (ours + e["Beth_err"].get<double>()) + 2e-4;
  if (expected == "runaway") {
    // ℶ is the limit |k| → ∞ (the reference quotes the closed-form limit or its own end point at
    // the box, which lies within its error of it).
    EXPECT_NEAR(risk, e["Beth"].get<double>(), error) << label;
    return;
  }
  EXPECT_NEAR(risk, e["Beth"].get<double>(), error) << label;
  const auto& ref = e["Beth_params"];
  // The reference's stated trust on order parameters (0.03; softplus m_kv 0.15), or three times its
  // own Monte Carlo error where that is larger: M_seed_halfdiff holds |difference of its two
  // samples|/2 of the four entries of M (the standard error of its two-sample mean; the file does
  // not say in which order, so the largest is taken). In flat directions (small Hessian
  // eigenvalue) that error exceeds the stated trust.
  double op_tol = activation == "softplus-kernel" ? 0.15 : 0.03;
  if (ref.contains("M_seed_halfdiff") && ref["M_seed_halfdiff"].is_array())
    for (const auto& halfdiff : ref["M_seed_halfdiff"]) op_tol = std::max(op_tol, 3 * std::abs(halfdiff.get<double>()));
  EXPECT_NEAR(m_kk, ref["m_kk"].get<double>(), op_tol) << label;
  EXPECT_NEAR(m_vv, ref["m_vv"].get<double>(), op_tol) << label;
  EXPECT_NEAR(m_kv, std::abs(ref["m_kv"].get<double>()), op_tol) << label;
  EXPECT_NEAR(m_vk, std::abs(ref["m_vk"].get<double>()), op_tol) << label;
}

TEST(Mismatched, ReferenceCasesSpikedNuFour) {
  // One case per activation and outcome class (distinct: softmax, erf, softplus; runaway: linear).
  for (const auto& c : reference_cases())
    if (c.away_from_branch_end && c.entry["L"].get<int>() == 3 && c.entry["task"] == "spiked" && nu_of(c.entry) == 4.0)
      check_case(c.entry, 40000);
}

TEST(MismatchedSlow, EveryReferenceCaseAwayFromTheBranchEnd) {
  if (std::getenv("SLR_RUN_SLOW") == nullptr) GTEST_SKIP() << "set SLR_RUN_SLOW=1 (ctest -L slow does)";
  // S = 1e5 as the reference; distinct minima with a flat direction (the reference's smallest
  // Hessian eigenvalue below 0.02) as the mean of two samples of S = 4e5: the Monte Carlo error of
  // an argmin grows like the inverse of that eigenvalue, and at S = 1e5 it exceeds the 0.03 allowed
  // on the order parameters
  // (spiked L = 10 softmax, m_kv: off by 0.04 at S = 1e5 for several seeds). The flattest case,
  // spiked ν = 2, L = 10 softmax (λ_min = 0.009), stays 0.032 away: m_kv 2.073 from both seeds
  // 2024 and 2025 against the reference's 2.041, whose own two samples differ by 0.050 there
  // (M_seed_halfdiff 0.025): the comparison allows three times that error (check_case).
  int checked = 0;
  for (const auto& c : reference_cases())
    if (c.away_from_branch_end) {
      const auto& e = c.entry;
      const bool flat = e["Beth_status"].get<std::string>().starts_with("distinct") &&
                        e["Beth_hess_min_eig"].is_number() && e["Beth_hess_min_eig"].get<double>() < 0.02;
      check_case(e, flat ? 400000 : 100000, flat ? 2 : 1);
      ++checked;
    }
  std::cout << checked << " reference cases checked\n";
}

} // namespace
} // namespace slr::theory
