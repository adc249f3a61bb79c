// Bayes-optimal state evolution (docs/theory.md §5): the L = 1 closed form, the reference cases
// (an unvalidated cross-check), the max-SLR channels, input validation and determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "slr/model/random.hpp"
#include "slr/model/teacher_fields.hpp"
#include "slr/theory/state_evolution.hpp"

namespace {
using namespace slr;

model::problem make_problem(model::task_kind kind, double nu, std::size_t L, double delta) {
  model::problem p;
  p.task = model::task(kind, nu);
  p.lengths = model::length_law::fixed(L);
  p.delta = delta;
  return p;
}

// L = 1 closed form: q̂_vv = α/(Δ² + 1 − q_vv), q_vv = q̂_vv/(1 + q̂_vv), risk Δ² + 1 − q_vv; spiked
// k-part q_kk = αν/(1 + αν) (exact per sample: g_χ = √ν), max-SLR k-part q_kk = 0 (no tilt at L = 1).
double exact_q_vv(double alpha, double delta) {
  double q = 0;
  for (int i = 0; i < 100000; ++i) {
    const double q_hat = alpha / (delta * delta + 1 - q);
    q = q_hat / (1 + q_hat);
  }
  return q;
}

// The same v-part map evaluated on the solver's own Monte Carlo sample (y − ω_z =
// (1 − q)z* + Δξ₀ − √(q − q²)ξ_z; streams as documented in state_evolution.cpp): the solver must
// reproduce its fixed point to rounding, which checks the channel code exactly, not up to MC error.
double sample_q_vv(const model::problem& p, double alpha, std::size_t samples, std::uint64_t seed) {
  const auto fields = model::draw_teacher_fields(p.task, p.lengths, samples, seed);
  double zz = 0, nn = 0, xx = 0, zn = 0, zx = 0, nx = 0;
  for (std::size_t s = 0; s < fields.size(); ++s) {
    model::counter_rng rng(seed, model::stream_purpose::channel_noise, s);
    const double xi0 = rng.normal();
    (void)rng.normal();
    const double xi_z = rng.normal();
    const double z = fields.z(s)[0], w = fields.weight[s];
    zz += w * z * z, nn += w * xi0 * xi0, xx += w * xi_z * xi_z;
    zn += w * z * xi0, zx += w * z * xi_z, nx += w * xi0 * xi_z;
  }
  const double d = p.delta;
  double q = 0.5;
  for (int i = 0; i < 100000; ++i) {
    const double a = 1 - q, c = std::sqrt(q - q * q);
    const double mean_square = a * a * zz + d * d * nn + c * c * xx + 2 * a * d * zn - 2 * a * c * zx - 2 * d * c * nx;
    const double s2 = d * d + 1 - q;
    const double q_hat = alpha * mean_square / (s2 * s2);
    q = q_hat / (1 + q_hat);
  }
  return q;
}

TEST(StateEvolution, LengthOneClosedForm) {
  const double alpha = 2.0, delta = 0.5, nu = 1.5;
  theory::state_evolution_options o;
  o.samples = 20000;
  o.tolerance = 1e-13;
  o.inner_samples = 16;
  for (const auto& [kind, task_nu] : {std::pair{model::task_kind::spiked, nu}, std::pair{model::task_kind::max, 3.0},
                                      std::pair{model::task_kind::max, std::numeric_limits<double>::infinity()}}) {
    const auto p = make_problem(kind, task_nu, 1, delta);
    const auto result = theory::state_evolution(p, alpha, o).solve(21);
    ASSERT_EQ(result.status, theory::solve_status::ok) << result.chosen.message;
    for (const auto& b : result.branches) {
      ASSERT_EQ(b.status, theory::solve_status::ok) << b.start;
      const double q_kk = kind == model::task_kind::spiked ? alpha * nu / (1 + alpha * nu) : 0.0;
      EXPECT_NEAR(b.q(0, 0), q_kk, 1e-10) << b.start;
      // Exact on the solver's sample (1e-8), and the population closed form within MC error.
      EXPECT_NEAR(b.q(1, 1), sample_q_vv(p, alpha, o.samples, 21), 1e-8) << b.start;
      const double exact = exact_q_vv(alpha, delta);
      EXPECT_NEAR(b.q(1, 1), exact, 4e-3) << b.start;
      EXPECT_NEAR(b.test_risk.value, delta * delta + 1 - exact, 4 * b.test_risk.stderr + 1e-3) << b.start;
      std::printf("[SE L=1] %s nu=%g %s: q_kk %.10f (exact %.10f) q_vv %.6f (closed form %.6f, on the sample "
                  "%.10f) risk %.5f +- %.5f (closed form %.5f)\n",
                  kind == model::task_kind::spiked ? "spiked" : "max", task_nu, b.start.c_str(), b.q(0, 0), q_kk,
                  b.q(1, 1), exact, sample_q_vv(p, alpha, o.samples, 21), b.test_risk.value, b.test_risk.stderr,
                  delta * delta + 1 - exact);
    }
  }
}

TEST(StateEvolution, ReferenceCases) {
  std::ifstream in(std::string(SLR_REFERENCE_DIR) + "/state_evolution.json");
  ASSERT_TRUE(in) << "cannot open state_evolution.json";
  const auto cases = nlohmann::json::parse(in)["cases"];
  ASSERT_EQ(cases.size(), 3U);
  theory::state_evolution_options o;
  o.samples = 20000;
  for (const auto& c : cases) {
    const auto p = make_problem(model::task_kind::spiked, c["nu"].get<double>(), c["L"].get<std::size_t>(),
                                c["Delta"].get<double>());
    const auto result = theory::state_evolution(p, c["alpha"].get<double>(), o).solve(5);
    ASSERT_EQ(result.status, theory::solve_status::ok);
    const auto& b = result.chosen;
    EXPECT_NEAR(b.test_risk.value, c["test"].get<double>(), 0.02);
    EXPECT_NEAR(b.q(0, 0), c["q_kk"].get<double>(), 0.02);
    EXPECT_NEAR(b.q(1, 1), c["q_vv"].get<double>(), 0.02);
    EXPECT_FALSE(result.coexistence); // the reference saw no coexistence at these α
    std::printf("[SE reference] alpha=%g: test %.4f +- %.4f (ref %.4f) q_kk %.4f (%.4f) q_vv %.6f (%.6f)\n",
                c["alpha"].get<double>(), b.test_risk.value, b.test_risk.stderr, c["test"].get<double>(), b.q(0, 0),
                c["q_kk"].get<double>(), b.q(1, 1), c["q_vv"].get<double>());
  }
}

// ν = ∞ (orthant quadrature) is the limit of finite-ν max-SLR (inner Monte Carlo); same sample.
TEST(StateEvolution, MaxChannelsAgreeAtLargeNu) {
  theory::state_evolution_options o;
  o.samples = 2000;
  o.informed = false;
  o.inner_samples = 512; // the ratio estimate of g_out is biased O(ν/K): keep ν moderate, K large
  o.tolerance = 1e-4;
  const auto hard = theory::state_evolution(make_problem(model::task_kind::max, std::numeric_limits<double>::infinity(),
                                                         3, 0.5), 2.0, o).solve(8);
  const auto soft = theory::state_evolution(make_problem(model::task_kind::max, 30.0, 3, 0.5), 2.0, o).solve(8);
  ASSERT_EQ(hard.status, theory::solve_status::ok);
  ASSERT_EQ(soft.status, theory::solve_status::ok);
  EXPECT_NEAR(hard.chosen.q(0, 0), soft.chosen.q(0, 0), 0.05); // MC error ~0.02 at S = 2000, plus O(1/ν)
  EXPECT_NEAR(hard.chosen.q(1, 1), soft.chosen.q(1, 1), 0.05);
  EXPECT_NEAR(hard.chosen.test_risk.value, soft.chosen.test_risk.value, 0.05);
  std::printf("[SE max] nu=inf q %.4f %.4f risk %.4f | nu=30 q %.4f %.4f risk %.4f\n", hard.chosen.q(0, 0),
              hard.chosen.q(1, 1), hard.chosen.test_risk.value, soft.chosen.q(0, 0), soft.chosen.q(1, 1),
              soft.chosen.test_risk.value);
}

TEST(StateEvolution, GaussHermiteIntegratesMoments) {
  std::vector<double> t, w;
  theory::gauss_hermite_normal(20, t, w);
  double m0 = 0, m2 = 0, m4 = 0, m6 = 0;
  for (std::size_t j = 0; j < t.size(); ++j) {
    m0 += w[j], m2 += w[j] * t[j] * t[j], m4 += w[j] * std::pow(t[j], 4), m6 += w[j] * std::pow(t[j], 6);
  }
  EXPECT_NEAR(m0, 1, 1e-12);
  EXPECT_NEAR(m2, 1, 1e-12);
  EXPECT_NEAR(m4, 3, 1e-11);
  EXPECT_NEAR(m6, 15, 1e-10);
}

TEST(StateEvolution, RejectsBadInputAndHonoursCaps) {
  const auto p = make_problem(model::task_kind::spiked, 1.0, 3, 0.0);
  theory::state_evolution_options o;
  EXPECT_THROW(theory::state_evolution(p, 0.0, o), std::invalid_argument);
  EXPECT_THROW(theory::state_evolution(p, std::numeric_limits<double>::infinity(), o), std::invalid_argument);
  auto few = o;
  few.samples = 50;
  EXPECT_THROW(theory::state_evolution(p, 1.0, few), std::invalid_argument);
  auto none = o;
  none.informed = none.uninformed = false;
  EXPECT_THROW(theory::state_evolution(p, 1.0, none), std::invalid_argument);
  o.samples = 500;
  o.max_iterations = 2;
  o.tolerance = 1e-14;
  const auto capped = theory::state_evolution(p, 1.0, o).solve(1);
  EXPECT_EQ(capped.status, theory::solve_status::not_converged);
  EXPECT_EQ(capped.chosen.iterations, 2);
  o.max_iterations = 100000;
  o.wall_time_limit_s = 1e-9;
  EXPECT_EQ(theory::state_evolution(p, 1.0, o).solve(1).status, theory::solve_status::timeout);
}

TEST(StateEvolution, DeterministicForAnyThreadCount) {
  const auto p = make_problem(model::task_kind::max, 2.0, 3, 0.3);
  theory::state_evolution_options o;
  o.samples = 1500;
  o.inner_samples = 16;
  o.max_iterations = 4;
  o.threads = 1;
  const auto one = theory::state_evolution(p, 1.0, o).solve(2);
  o.threads = 3;
  const auto three = theory::state_evolution(p, 1.0, o).solve(2);
  EXPECT_EQ(one.chosen.q, three.chosen.q);
  EXPECT_EQ(one.chosen.free_entropy.value, three.chosen.free_entropy.value);
  EXPECT_EQ(one.chosen.test_risk.value, three.chosen.test_risk.value);
}
} // namespace
