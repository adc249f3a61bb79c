#include "reference_agreement.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "slr/erm/trainer.hpp"
#include "slr/theory/population.hpp"

namespace slr_test {
namespace {
using namespace slr;

struct quantity {
  const char* name;
  double fixed_point;
  double fixed_point_error; // MC error of the fixed point (note of fixed_point.json)
  std::vector<double> values;
};

model::problem problem_of(const nlohmann::json& c) {
  model::problem p;
  const auto nu = c["nu"].is_string() ? std::numeric_limits<double>::infinity() : c["nu"].get<double>();
  p.task = model::task(model::task::parse_kind(c["task"].get<std::string>()), nu);
  p.lengths = model::length_law::fixed(c["L"].get<std::size_t>());
  p.delta = c["Delta"].get<double>();
  p.activation.kind = model::activation_spec::parse_kind(c["activation"].get<std::string>());
  return p;
}
} // namespace

void check_reference_agreement(std::size_t D, std::size_t seeds, unsigned threads) {
  std::ifstream file(std::string(SLR_REFERENCE_DIR) + "/fixed_point.json");
  ASSERT_TRUE(file) << "cannot open " << SLR_REFERENCE_DIR << "/fixed_point.json";
  const auto reference = nlohmann::json::parse(file);
  int cases = 0;
  int beyond_three_sigma = 0;
  for (const auto& c : reference["cases"]) {
    if (c["kind"] != "finite_alpha_erm" || c["r_k"].get<double>() != 1.0 || c["r_v"].get<double>() != 1.0) continue;
    ++cases;
    const auto problem = problem_of(c);
    const double alpha = c["alpha"].get<double>();
    const auto& fp = c["fixed_point"];
    // The note of fixed_point.json: MC error ~0.01 on the test risk (quoted per case) and
    // 2–4% on order parameters; 4% is used. The symmetric fixed point puts m_kv, m_vk, q_kv at
    // exactly 0 (no error); there only the ERM seed spread enters the bound.
    const auto relative = [&](const char* key) { return 0.04 * std::abs(fp[key].get<double>()); };
    std::vector<quantity> q = {
        {"m_kk", fp["m_kk"], relative("m_kk"), {}},     {"m_kv", 0.0, 0.0, {}},
        {"m_vk", 0.0, 0.0, {}},                          {"m_vv", fp["m_vv"], relative("m_vv"), {}},
        {"q_kk", fp["q_kk"], relative("q_kk"), {}},     {"q_kv", 0.0, 0.0, {}},
        {"q_vv", fp["q_vv"], relative("q_vv"), {}},     {"train", fp["train"], relative("train"), {}},
        {"test", fp["test"], fp["test_mc_err"].get<double>(), {}},
    };
    for (std::size_t s = 0; s < seeds; ++s) {
      const std::uint64_t seed = 1000 + s;
      const auto teacher = erm::teacher::draw(D, seed);
      const auto N = static_cast<std::size_t>(std::llround(alpha * static_cast<double>(D)));
      const auto data = erm::sequence_data::generate(problem, teacher, N, seed, model::stream_purpose::training_data,
                                                     erm::precision::f64, threads);
      const erm::empirical_risk risk(data, problem.activation, 1.0, 1.0, threads);
      const auto w0 = erm::initial_weights(teacher, erm::initialisation::informed, 0.1, seed);
      const auto result = erm::train(risk, teacher, w0, {});
      ASSERT_EQ(result.stopped, erm::stop_reason::tolerance) << result.message;
      const auto Di = static_cast<Eigen::Index>(D);
      const auto op = erm::measure_order_parameters(teacher, result.w.head(Di), result.w.tail(Di));
      // Test risk = population formula at the learned overlaps (exact in expectation for fresh
      // sequences, docs/theory.md §2), as in the reference's ERM column.
      const auto test = theory::population_risk(problem, op, {100'000, seed, threads});
      const double values[] = {op.m_kk, op.m_kv, op.m_vk, op.m_vv, op.q_kk, op.q_kv, op.q_vv, result.train_loss,
                               test.value};
      for (std::size_t i = 0; i < q.size(); ++i) q[i].values.push_back(values[i]);
    }
    std::printf("case %s nu=%s L=%d %s alpha=%g r=1, D=%zu, %zu seeds\n", c["task"].get<std::string>().c_str(),
                c["nu"].dump().c_str(), c["L"].get<int>(), c["activation"].get<std::string>().c_str(), alpha, D, seeds);
    for (const auto& x : q) {
      double mean = 0, square = 0;
      for (double v : x.values) mean += v;
      mean /= static_cast<double>(seeds);
      for (double v : x.values) square += (v - mean) * (v - mean);
      const double sd = std::sqrt(square / static_cast<double>(seeds - 1));
      const double se = sd / std::sqrt(static_cast<double>(seeds));
      const double bound = 3 * std::sqrt(se * se + x.fixed_point_error * x.fixed_point_error);
      std::printf("  %-6s ERM %.4f ± %.4f (sd %.4f)  FP %.4f ± %.4f  |diff| %.4f  bound %.4f\n", x.name, mean, se, sd,
                  x.fixed_point, x.fixed_point_error, std::abs(mean - x.fixed_point), bound);
      const double sigmas = std::abs(mean - x.fixed_point) / (bound / 3);
      EXPECT_LE(sigmas, 4.0) << x.name << " of case " << c.dump();
      if (sigmas > 3.0) {
        ++beyond_three_sigma;
        std::printf("  note: %s is %.2f combined standard errors from the fixed point\n", x.name, sigmas);
      }
    }
  }
  EXPECT_EQ(cases, 3); // spiked softmax, spiked linear, max ν = ∞ softmax
  // 27 comparisons, each with a seed-spread standard error (t with seeds − 1 degrees of freedom):
  // even with perfect agreement about 0.4 of them exceed 3σ (P(|t_9| > 3) ≈ 1.5%). So every
  // comparison must be within 4σ and at most one may lie between 3σ and 4σ.
  EXPECT_LE(beyond_three_sigma, 1);
}
} // namespace slr_test
