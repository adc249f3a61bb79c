// The "erm" solver through the registry: a small point fills every promised column, the
// gradient-flow trajectory goes into extra_json, results do not depend on the thread count,
// and bad input (D < 2, α ≤ 0, memory that cannot fit) is refused with a clear message.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <map>
#include <string>

#include "slr/methods/registry.hpp"

namespace {
using namespace slr;

grid::point small_point() {
  grid::point p;
  p.method = "erm";
  p.alpha = 4;
  p.r_k = p.r_v = 1;
  p.seed = 17;
  p.options = {{"D", "100"}, {"test-samples", "2000"}};
  return p;
}

TEST(MethodErm, SmallPointFillsTheColumns) {
  auto p = small_point();
  methods::complete_point(p);
  const auto r = methods::solve_point(p, {2});
  ASSERT_EQ(r.status, grid::status::ok) << r.message;
  for (const char* column : {"test_risk", "test_risk_stderr", "train_loss", "train_loss_regularised", "iterations", "D",
                             "N", "grad_evals", "grad_time_s", "rel_grad", "peak_rss_mb", "risk", "risk_stderr",
                             "order_parameters.m_kk", "order_parameters.m_kv", "order_parameters.m_vk",
                             "order_parameters.m_vv", "order_parameters.q_kk", "order_parameters.q_kv",
                             "order_parameters.q_vv"})
    EXPECT_TRUE(std::isfinite(r.get(column))) << column;
  EXPECT_EQ(r.get("D"), 100);
  EXPECT_EQ(r.get("N"), 400);
  EXPECT_LE(r.get("rel_grad"), 1e-6);
  EXPECT_EQ(r.get("risk"), r.get("test_risk"));
  // Regularised = unregularised + (r_k q_kk + r_v q_vv)/(2α).
  EXPECT_NEAR(r.get("train_loss_regularised"),
              r.get("train_loss") + (r.get("order_parameters.q_kk") + r.get("order_parameters.q_vv")) / 8, 1e-12);
  const auto extra = nlohmann::json::parse(r.extra_json);
  EXPECT_EQ(extra["stopped_by"], "tolerance");
  // Fresh-sequence test risk and the population formula at the same overlaps estimate the
  // same number (docs/theory.md §2).
  const double gap = std::abs(extra["population_risk"].get<double>() - r.get("test_risk"));
  EXPECT_LT(gap, 4 * std::hypot(r.get("test_risk_stderr"), extra["population_risk_stderr"].get<double>()));

  const auto one_thread = methods::solve_point(p, {1});
  EXPECT_EQ(one_thread.get("order_parameters.m_kk"), r.get("order_parameters.m_kk"));
  EXPECT_EQ(one_thread.get("test_risk"), r.get("test_risk"));
}

TEST(MethodErm, GradientFlowTrajectory) {
  auto p = small_point();
  p.options["optimizer"] = "gradient-flow";
  p.options["horizon"] = "20";
  p.options["trajectory-times"] = "0,1,5";
  p.options["trajectory"] = "1";
  methods::complete_point(p);
  const auto r = methods::solve_point(p, {1});
  ASSERT_TRUE(r.status == grid::status::ok) << r.message;
  const auto extra = nlohmann::json::parse(r.extra_json);
  ASSERT_TRUE(extra.contains("trajectory"));
  const auto& trajectory = extra["trajectory"];
  ASSERT_GE(trajectory.size(), 2U);
  EXPECT_EQ(trajectory[0]["t"], 0.0);
  EXPECT_TRUE(trajectory[0]["order_parameters"].contains("m_kk"));
  // The informed start: m_kk ≈ 1 at t = 0, then it moves.
  EXPECT_NEAR(trajectory[0]["order_parameters"]["m_kk"].get<double>(), 1.0, 0.05);
}

TEST(MethodErm, BadInput) {
  auto p = small_point();
  p.options["D"] = "1";
  EXPECT_THROW(methods::complete_point(p), std::invalid_argument);
  p = small_point();
  p.alpha = 0;
  EXPECT_THROW(methods::complete_point(p), std::invalid_argument);
  p = small_point();
  p.alpha = -2;
  EXPECT_THROW(methods::complete_point(p), std::invalid_argument);
  p = small_point();
  p.options["trajectory-times"] = "0,abc";
  p.options["optimizer"] = "gradient-flow";
  methods::complete_point(p);
  const auto bad_times = methods::solve_point(p, {1});
  EXPECT_EQ(bad_times.status, grid::status::failed);
  EXPECT_NE(bad_times.message.find("trajectory-times"), std::string::npos);
  // D = 10^6, N = 10^9, L = 3 doubles = 24 PB: refused before anything is allocated.
  p = small_point();
  p.options["D"] = "1000000";
  p.alpha = 1e3;
  methods::complete_point(p);
  const auto& method = methods::find_method("erm");
  EXPECT_GT(static_cast<double>(method.memory_bytes(p)), 2.4e16);
  const auto refused = methods::solve_point(p, {1});
  EXPECT_EQ(refused.status, grid::status::failed);
  EXPECT_NE(refused.message.find("MB are available"), std::string::npos) << refused.message;
}

// Options added after archives existed stay out of a point's identity while at their default.
TEST(MethodErm, NewInitOptionsKeepOldIdentities) {
  auto p = small_point();
  methods::complete_point(p);
  EXPECT_EQ(p.options.count("init-weights"), 0U);
  EXPECT_EQ(p.options.count("init-overlaps"), 0U);
  EXPECT_EQ(p.canonical().find("init-"), p.canonical().find("init-noise"));
  EXPECT_EQ(methods::option_text(p, "init-weights"), "");
  auto q = small_point();
  q.options["init"] = "overlaps";
  q.options["init-overlaps"] = "0.5,0,0,0.5,0.5,0,0.5";
  methods::complete_point(q);
  EXPECT_EQ(q.options.at("init-overlaps"), "0.5,0,0,0.5,0.5,0,0.5");
  EXPECT_NE(q.identity(), p.identity());
}

// --init overlaps and the α-chain warm start start from exactly the requested overlaps.
TEST(MethodErm, OverlapStartsAndWarmStart) {
  auto p = small_point();
  p.options["init"] = "overlaps";
  p.options["init-overlaps"] = "0.2,0.01,-0.02,0.3,0.3,0.05,0.4";
  methods::complete_point(p);
  const auto r = methods::solve_point(p, {1});
  ASSERT_EQ(r.status, grid::status::ok) << r.message;
  auto extra = nlohmann::json::parse(r.extra_json);
  EXPECT_EQ(extra["init"], "overlaps");
  EXPECT_NEAR(extra["initial_order_parameters"]["m_kk"].get<double>(), 0.2, 1e-12);
  EXPECT_NEAR(extra["initial_order_parameters"]["q_kv"].get<double>(), 0.05, 1e-12);
  // The next point of a chain starts from what this one reached, whatever its own init says.
  auto next = small_point();
  next.alpha = 5;
  methods::complete_point(next);
  methods::run_context context{1};
  context.warm_start = &r;
  const auto warm = methods::solve_point(next, context);
  ASSERT_EQ(warm.status, grid::status::ok) << warm.message;
  extra = nlohmann::json::parse(warm.extra_json);
  EXPECT_EQ(extra["init"], "warm-start");
  for (const char* name : {"m_kk", "m_kv", "m_vk", "m_vv", "q_kk", "q_kv", "q_vv"})
    EXPECT_NEAR(extra["initial_order_parameters"][name].get<double>(),
                r.get(std::string("order_parameters.") + name), 1e-12) << name;
  // D < 4 leaves no room for the noise directions: the chain falls back to the point's own init.
  auto tiny = small_point();
  tiny.options["D"] = "3";
  methods::complete_point(tiny);
  const auto tiny_warm = methods::solve_point(tiny, context);
  EXPECT_NE(tiny_warm.status, grid::status::failed) << tiny_warm.message;
  EXPECT_EQ(nlohmann::json::parse(tiny_warm.extra_json)["init"], "informed");
}

// Bad start inputs are refused when the point is completed (before scheduling), naming the option.
TEST(MethodErm, BadStartInputs) {
  const auto message_of = [](std::map<std::string, std::string> options) {
    auto p = small_point();
    for (const auto& [k, v] : options) p.options[k] = v;
    try {
      methods::complete_point(p);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message_of({{"init", "given"}}).find("init-weights"), std::string::npos);
  EXPECT_NE(message_of({{"init", "given"}, {"init-weights", "/nonexistent/w.txt"}}).find("cannot open"),
            std::string::npos);
  EXPECT_NE(message_of({{"init-weights", "w.txt"}}).find("only used with init = given"), std::string::npos);
  EXPECT_NE(message_of({{"init", "overlaps"}}).find("init-overlaps"), std::string::npos);
  EXPECT_NE(message_of({{"init", "overlaps"}, {"init-overlaps", "1,2"}}).find("expected 7"), std::string::npos);
  // m_kk = 1 but q_kk = 0.5 < m_kk²: not realisable.
  EXPECT_NE(message_of({{"init", "overlaps"}, {"init-overlaps", "1,0,0,0,0.5,0,1"}}).find("positive semi-definite"),
            std::string::npos);
  EXPECT_NE(message_of({{"init-overlaps", "1,0,0,0,1,0,1"}}).find("only used with init = overlaps"),
            std::string::npos);
  EXPECT_NE(message_of({{"init", "overlaps"}, {"init-overlaps", "0,0,0,0,1,0,1"}, {"D", "3"}}).find("D >= 4"),
            std::string::npos);
}
} // namespace
