// MPI-free parts of the scheduler: the report encoding, memory sizes, progress lines and stop
// flags.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <sstream>

#include "protocol.hpp"
#include "slr/sched/node_memory.hpp"
#include "slr/sched/progress.hpp"
#include "slr/sched/stop_signals.hpp"

namespace {
namespace sched = slr::sched;

TEST(Protocol, ReportRoundTripsExactly) {
  sched::protocol::report message;
  slr::grid::result_record record;
  record.status = slr::grid::status::timeout;
  record.message = "wall-time cap";
  record.extra_json = R"({"trajectory":[1,2]})";
  record.set("risk", 0.1 + 0.2);
  record.set("wall_s", -0.0);
  message.results.push_back({17, 3, record});
  message.released = {17, 4};
  message.dropped = {9};
  message.drained = true;
  const auto decoded = sched::protocol::decode(sched::protocol::encode(message));
  ASSERT_EQ(decoded.results.size(), 1u);
  EXPECT_EQ(decoded.results[0].unit, 17);
  EXPECT_EQ(decoded.results[0].position, 3);
  EXPECT_EQ(decoded.results[0].record.status, slr::grid::status::timeout);
  EXPECT_EQ(decoded.results[0].record.message, "wall-time cap");
  EXPECT_EQ(decoded.results[0].record.extra_json, record.extra_json);
  EXPECT_EQ(decoded.results[0].record.get("risk"), 0.1 + 0.2);
  EXPECT_TRUE(std::signbit(decoded.results[0].record.get("wall_s")));
  EXPECT_TRUE(std::isnan(decoded.results[0].record.get("D")));
  EXPECT_EQ(decoded.released, message.released);
  EXPECT_EQ(decoded.dropped, message.dropped);
  EXPECT_TRUE(decoded.drained);
  EXPECT_FALSE(decoded.goodbye);
}

TEST(NodeMemory, ParsesSizesWithBinaryUnits) {
  EXPECT_EQ(sched::parse_memory_size("4096"), 4096u);
  EXPECT_EQ(sched::parse_memory_size("512M"), 512u << 20);
  EXPECT_EQ(sched::parse_memory_size("64G"), 64ULL << 30);
  EXPECT_EQ(sched::parse_memory_size("1.5T"), 3ULL << 39);
  EXPECT_EQ(sched::parse_memory_size("2GiB"), 2ULL << 30);
  EXPECT_EQ(sched::parse_memory_size("8gb"), 8ULL << 30);
  for (const char* bad : {"", "G", "-1G", "0", "12X", "1e30T", "nan"})
    EXPECT_THROW((void)sched::parse_memory_size(bad), std::invalid_argument) << bad;
}

TEST(NodeMemory, ReportsAvailableMemory) {
  const auto bytes = sched::available_memory_bytes();
  EXPECT_GT(bytes, 16u << 20);
  EXPECT_LT(bytes, 1ULL << 50);
}

TEST(Progress, LineCountsPointsFailuresAndEta) {
  std::ostringstream out;
  sched::progress_meter meter(out, false, 1e9);
  sched::progress_state state;
  state.total = 200;
  state.done = 50;
  state.not_ok = {{"diverged", 1}, {"failed", 2}, {"not_converged", 4}};
  state.total_cost = 10;
  state.done_cost = 10;
  const auto text = meter.line(state);
  EXPECT_NE(text.find("50/200 points (25.0%)"), std::string::npos) << text;
  EXPECT_NE(text.find("not ok: 1 diverged, 2 failed, 4 not_converged"), std::string::npos) << text;
  state.not_ok.clear();
  EXPECT_NE(meter.line(state).find("all ok"), std::string::npos) << meter.line(state);
  state.not_ok = {{"failed", 2}};
  EXPECT_NE(text.find("ETA 0s"), std::string::npos) << text; // all estimated cost is done
  meter.update(state);
  EXPECT_TRUE(out.str().empty()); // log lines only every interval
  meter.finish(state, "complete");
  EXPECT_NE(out.str().find("slr-sweep: complete: 50/200 points"), std::string::npos) << out.str();
}

TEST(Progress, EtaCalibratesEachMethodByItsMeasuredTimes) {
  sched::eta_model eta;
  for (int i = 0; i < 10; ++i) eta.add_planned("slow", 1.0);  // modelled 1 s, takes 3 s
  for (int i = 0; i < 10; ++i) eta.add_planned("fast", 2.0);  // modelled 2 s, takes 1 s
  eta.add_planned("unseen", 4.0);                              // no data: the overall factor
  eta.add_finished("slow", 1.0, 3.0);
  eta.add_finished("slow", 1.0, 3.0);
  eta.add_finished("fast", 2.0, 1.0);
  EXPECT_DOUBLE_EQ(eta.factor("slow"), 3.0);
  EXPECT_DOUBLE_EQ(eta.factor("fast"), 0.5);
  EXPECT_DOUBLE_EQ(eta.factor("unseen"), 7.0 / 4.0); // (3 + 3 + 1) / (1 + 1 + 2)
  // Left: 8 slow (8 s modelled) × 3, 9 fast (18 s) × 0.5, the unseen 4 s × 7/4 → 24 + 9 + 7 = 40 s.
  EXPECT_DOUBLE_EQ(eta.remaining_s(1), 40.0);
  EXPECT_DOUBLE_EQ(eta.remaining_s(4), 10.0);
  // Never less than the largest unit still to run, calibrated: a 5 s "slow" chain takes 15 s.
  EXPECT_DOUBLE_EQ(eta.remaining_s(4, {{"slow", 5.0}}), 15.0);
  sched::eta_model empty;
  EXPECT_DOUBLE_EQ(empty.factor("any"), 1.0);
}

TEST(StopSignals, RaisedSignalIsRecordedNotFatal) {
  sched::reset_stop();
  sched::install_stop_handlers();
  EXPECT_EQ(sched::stop_signal(), 0);
  std::raise(SIGUSR1);
  EXPECT_EQ(sched::stop_signal(), SIGUSR1);
  std::raise(SIGTERM);
  EXPECT_EQ(sched::stop_signal(), SIGTERM);
  EXPECT_EQ(sched::stop_signal_count(), 2);
  sched::reset_stop();
  EXPECT_EQ(sched::stop_signal_count(), 0);
}

} // namespace
