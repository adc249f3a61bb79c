// The testing method "synthetic": values a function of (identity, seed) only, busy-work cost,
// injected failures, warm starts along a chain and the wall-time cap.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "slr/methods/registry.hpp"
#include "slr/model/random.hpp"

namespace {
namespace methods = slr::methods;
using slr::grid::point;

point synthetic(double alpha, std::map<std::string, std::string> options, std::uint64_t seed = 3) {
  point p;
  p.method = "synthetic";
  p.alpha = alpha;
  p.r_k = 0;
  p.r_v = 0;
  p.seed = seed;
  p.options = std::move(options);
  methods::complete_point(p);
  return p;
}

TEST(Synthetic, ValuesDependOnlyOnIdentityAndSeed) {
  const auto p = synthetic(0.5, {});
  const auto a = methods::solve_point(p, {});
  const auto b = methods::solve_point(p, {4, 1e9, nullptr});
  ASSERT_EQ(a.status, slr::grid::status::ok);
  // Independently: the first uniform of the stream (derive_seed(seed, identity), repeat, 0).
  slr::model::counter_rng rng(slr::model::derive_seed(3, p.identity()), slr::model::stream_purpose::repeat, 0);
  EXPECT_EQ(a.get("risk"), rng.uniform());
  EXPECT_EQ(a.get("free_entropy_other"), static_cast<double>(p.identity() >> 12));
  for (std::size_t c = 0; c + 1 < slr::grid::result_columns.size(); ++c) // all but wall_s
    EXPECT_TRUE(a.values[c] == b.values[c] || (std::isnan(a.values[c]) && std::isnan(b.values[c])));
  EXPECT_NE(methods::solve_point(synthetic(0.5, {}, 4), {}).get("risk"), a.get("risk"));
  EXPECT_NE(methods::solve_point(synthetic(0.6, {}), {}).get("risk"), a.get("risk"));
}

TEST(Synthetic, CostFailureInjectionAndWarmStart) {
  const auto slow = methods::solve_point(synthetic(1, {{"cost-us", "20000"}}), {});
  EXPECT_GE(slow.get("wall_s"), 0.02);
  const auto failing = synthetic(2, {{"fail-if", "alpha=2|seed=99"}});
  const auto failed = methods::solve_point(failing, {});
  EXPECT_EQ(failed.status, slr::grid::status::failed);
  EXPECT_NE(failed.message.find("synthetic failure injected"), std::string::npos);
  EXPECT_EQ(methods::solve_point(synthetic(3, {{"fail-if", "alpha=2|seed=99"}}), {}).status, slr::grid::status::ok);
  EXPECT_EQ(methods::solve_point(synthetic(3, {{"fail-if", "alpha=2|seed=99"}}, 99), {}).status,
            slr::grid::status::failed);
  const auto first = methods::solve_point(synthetic(1, {}), {});
  EXPECT_EQ(first.get("iterations"), 1);
  methods::run_context warm;
  warm.warm_start = &first;
  EXPECT_EQ(methods::solve_point(synthetic(2, {}), warm).get("iterations"), 2);
  const auto p = synthetic(1, {{"memory-mb", "3"}});
  EXPECT_EQ(methods::find_method("synthetic").memory_bytes(p), 3u << 20);
  EXPECT_DOUBLE_EQ(methods::find_method("synthetic").cost_seconds(synthetic(1, {{"cost-us", "250"}})), 2.5e-4);
}

TEST(Synthetic, CooperativeBusyWorkHonoursTheWallTimeCap) {
  methods::run_context capped;
  capped.wall_time_limit_s = 0.05;
  const auto record = methods::solve_point(synthetic(1, {{"cost-us", "10000000"}}), capped);
  EXPECT_EQ(record.status, slr::grid::status::timeout);
  EXPECT_LT(record.get("wall_s"), 1.0);
}

} // namespace
