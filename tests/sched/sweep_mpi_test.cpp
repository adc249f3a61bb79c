// MPI tests of the scheduler, run under mpirun with 1, 2, 3 and 5 ranks (name.npN). Every test
// is collective (all ranks run the same tests in the same order); rank 0 holds the sink and
// asserts. Expected values come from solve_point called directly in this process, which knows
// nothing about ranks or order, so equal values on every rank count means rank-independent results.
#include <gtest/gtest.h>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "slr/methods/registry.hpp"
#include "slr/sched/stop_signals.hpp"
#include "slr/sched/sweep.hpp"

namespace {
using slr::grid::point;
using slr::grid::result_record;
using slr::grid::work_unit;
namespace sched = slr::sched;
namespace methods = slr::methods;

point synthetic(double alpha, double r_k, std::uint64_t seed, std::map<std::string, std::string> options) {
  point p;
  p.method = "synthetic";
  p.alpha = alpha;
  p.r_k = r_k;
  p.r_v = 0.25;
  p.seed = seed;
  p.options = std::move(options);
  methods::complete_point(p);
  return p;
}

using key = std::pair<std::uint64_t, std::uint64_t>; // (identity, seed)
key key_of(const point& p) { return {p.identity(), p.seed}; }

// 200 single points of varied cost (one fails by injection) and 20 α-continuation chains of 5
// points (chain 4 fails at α = 3 and restarts cold after it).
std::vector<work_unit> mixed_units() {
  std::vector<work_unit> units;
  for (int i = 0; i < 200; ++i)
    units.push_back({{synthetic(0.1 * (i + 1), 0, static_cast<std::uint64_t>(i),
                                {{"cost-us", std::to_string((i % 7) * 40)}, {"fail-if", "alpha=2"}})}});
  for (int chain = 0; chain < 20; ++chain) {
    work_unit unit;
    for (int a = 1; a <= 5; ++a)
      unit.points.push_back(synthetic(a, chain, 7, {{"cost-us", "100"}, {"fail-if", chain == 4 ? "alpha=3" : ""}}));
    units.push_back(unit);
  }
  return units;
}

// What each point must hold: solve_point in this process, chains warm-started like the worker.
std::map<key, result_record> expected_results(const std::vector<work_unit>& units) {
  std::map<key, result_record> expected;
  for (const auto& unit : units) {
    result_record previous;
    for (std::size_t i = 0; i < unit.points.size(); ++i) {
      methods::run_context context;
      const bool usable = previous.status != slr::grid::status::failed && previous.status != slr::grid::status::timeout;
      context.warm_start = i > 0 && usable ? &previous : nullptr;
      previous = methods::solve_point(unit.points[i], context);
      expected[key_of(unit.points[i])] = previous;
    }
  }
  return expected;
}

void expect_same_values(const result_record& actual, const result_record& expected, const std::string& what) {
  EXPECT_EQ(actual.status, expected.status) << what;
  EXPECT_EQ(actual.message, expected.message) << what;
  for (std::size_t c = 0; c < slr::grid::result_columns.size(); ++c) {
    if (slr::grid::result_columns[c] == "wall_s") continue; // a timing, not a result
    const double a = actual.values[c], e = expected.values[c];
    EXPECT_TRUE((std::isnan(a) && std::isnan(e)) || a == e)
        << what << " column " << slr::grid::result_columns[c] << ": " << a << " vs " << e;
  }
}

sched::sweep_options quiet_options() {
  sched::sweep_options options;
  options.show_progress = false;
  return options;
}

boost::mpi::communicator world() { return {}; }

TEST(Sweep, EveryPointExactlyOnceWithRankIndependentValues) {
  const auto comm = world();
  const auto units = mixed_units();
  sched::memory_sink sink;
  const auto outcome = sched::run_sweep(comm, units, nullptr, &sink, quiet_options());
  EXPECT_EQ(outcome.exit_code, 0);
  if (comm.rank() != 0) return;
  const auto expected = expected_results(units);
  ASSERT_EQ(expected.size(), 300u);
  EXPECT_EQ(outcome.total_points, 300u);
  EXPECT_EQ(outcome.recorded_points, 300u);
  EXPECT_EQ(sink.flushed_rows, sink.rows.size());
  std::map<key, int> seen;
  for (const auto& [p, record] : sink.rows) {
    const auto k = key_of(p);
    ++seen[k];
    ASSERT_TRUE(expected.count(k)) << p.canonical();
    expect_same_values(record, expected.at(k), p.canonical());
    EXPECT_TRUE(std::isfinite(record.get("wall_s")));
  }
  EXPECT_EQ(seen.size(), expected.size());
  for (const auto& [k, count] : seen) EXPECT_EQ(count, 1);
  // The failure path: the injected failure arrives as status failed with the message, the
  // other points of the sweep are unaffected.
  EXPECT_EQ(outcome.failed_points, 2u); // α = 2 among the singles, α = 3 of chain 4
  const auto& failed = expected.at(key_of(units[19].points[0]));
  EXPECT_EQ(failed.status, slr::grid::status::failed);
  EXPECT_NE(failed.message.find("synthetic failure injected"), std::string::npos);
  // Warm starts along chains: iterations count up along the chain, restart after the failure.
  const auto& chain4 = units[204].points;
  EXPECT_EQ(expected.at(key_of(units[200].points[4])).get("iterations"), 5);
  EXPECT_EQ(expected.at(key_of(chain4[1])).get("iterations"), 2);
  EXPECT_EQ(expected.at(key_of(chain4[3])).get("iterations"), 1);
  EXPECT_EQ(expected.at(key_of(chain4[4])).get("iterations"), 2);
}

TEST(Sweep, ResumeRecordsOnlyMissingPoints) {
  const auto comm = world();
  const auto units = mixed_units();
  std::set<key> done;
  for (std::size_t u = 0; u < units.size(); u += 3)
    for (std::size_t i = 0; i < units[u].points.size(); i += 2) done.insert(key_of(units[u].points[i]));
  sched::memory_sink sink;
  const auto outcome = sched::run_sweep(
      comm, units, [&](std::size_t u, std::size_t i) { return done.count(key_of(units[u].points[i])) > 0; }, &sink,
      quiet_options());
  EXPECT_EQ(outcome.exit_code, 0);
  if (comm.rank() != 0) return;
  const auto expected = expected_results(units);
  EXPECT_EQ(outcome.skipped_points, done.size());
  EXPECT_EQ(sink.rows.size() + done.size(), 300u);
  std::set<key> recorded;
  for (const auto& [p, record] : sink.rows) {
    EXPECT_FALSE(done.count(key_of(p))) << "recorded a point that was already done";
    EXPECT_TRUE(recorded.insert(key_of(p)).second) << "recorded twice";
    expect_same_values(record, expected.at(key_of(p)), p.canonical()); // partial chains re-run from the start
  }
}

// A sink that raises SIGTERM (as if from Slurm) after some rows.
class interrupting_sink final : public sched::result_sink {
public:
  explicit interrupting_sink(std::size_t after) : after_(after) {}
  void record(std::size_t unit, std::size_t position, const point& p, const result_record& r) override {
    inner.record(unit, position, p, r);
    if (inner.rows.size() == after_) {
      stop_time = std::chrono::steady_clock::now();
      sched::request_stop(SIGTERM);
    }
  }
  void flush() override { inner.flush(); }
  sched::memory_sink inner;
  std::chrono::steady_clock::time_point stop_time{};

private:
  std::size_t after_;
};

TEST(Sweep, StopSignalDrainsWithinGraceAndResumeCompletes) {
  const auto comm = world();
  std::vector<work_unit> units;
  for (int i = 0; i < 60; ++i) units.push_back({{synthetic(1 + i, 0, 1, {{"cost-us", "20000"}})}});
  auto options = quiet_options();
  options.grace_s = 2.0;
  interrupting_sink sink(5);
  sched::reset_stop();
  const auto outcome = sched::run_sweep(comm, units, nullptr, &sink, options);
  const auto drained = std::chrono::steady_clock::now();
  sched::reset_stop();
  EXPECT_EQ(outcome.exit_code, sched::exit_incomplete);
  std::set<key> done;
  if (comm.rank() == 0) {
    EXPECT_EQ(outcome.stop_signal, SIGTERM);
    EXPECT_GT(outcome.abandoned_units, 0u);
    const double drain_s = std::chrono::duration<double>(drained - sink.stop_time).count();
    EXPECT_LT(drain_s, options.grace_s + 1.0);
    // The running 20 ms points finish and the workers report drained long before the grace ends.
    EXPECT_LT(drain_s, 1.0);
    EXPECT_EQ(sink.inner.flushed_rows, sink.inner.rows.size());
    for (const auto& row : sink.inner.rows) EXPECT_TRUE(done.insert(key_of(row.first)).second);
  }
  sched::memory_sink rest;
  const auto resumed =
      sched::run_sweep(comm, units, [&](std::size_t u, std::size_t i) { return done.count(key_of(units[u].points[i])) > 0; },
                       &rest, options);
  EXPECT_EQ(resumed.exit_code, 0);
  if (comm.rank() != 0) return;
  for (const auto& row : rest.rows) EXPECT_TRUE(done.insert(key_of(row.first)).second) << "recorded twice";
  EXPECT_EQ(done.size(), units.size());
}

TEST(Sweep, WallTimeCapRecordsTimeoutForCooperativeAndStuckSolvers) {
  const auto comm = world();
  std::vector<work_unit> units;
  units.push_back({{synthetic(1, 0, 1, {{"cost-us", "30000000"}})}});                          // honours the cap
  units.push_back({{synthetic(2, 0, 1, {{"cost-us", "2500000"}, {"cooperative", "no"}}),       // ignores it
                    synthetic(3, 0, 1, {})}});                                                 // never started
  units.push_back({{synthetic(4, 0, 1, {})}});
  auto options = quiet_options();
  options.point_timeout_s = 0.3;
  sched::memory_sink sink;
  const auto start = std::chrono::steady_clock::now();
  const auto outcome = sched::run_sweep(comm, units, nullptr, &sink, options);
  EXPECT_EQ(outcome.exit_code, 0);
  if (comm.rank() != 0) return;
  // The stuck solver is abandoned at the hard cap (1.05 · 0.3 + 1 s), well before its 2.5 s.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.4);
  std::map<double, result_record> by_alpha;
  for (const auto& [p, record] : sink.rows) by_alpha[p.alpha] = record;
  ASSERT_EQ(by_alpha.size(), 4u);
  EXPECT_EQ(by_alpha[1].status, slr::grid::status::timeout);
  EXPECT_EQ(by_alpha[2].status, slr::grid::status::timeout);
  EXPECT_NE(by_alpha[2].message.find("abandoned"), std::string::npos);
  EXPECT_EQ(by_alpha[3].status, slr::grid::status::timeout);
  EXPECT_NE(by_alpha[3].message.find("not started"), std::string::npos);
  EXPECT_EQ(by_alpha[4].status, slr::grid::status::ok);
  EXPECT_EQ(outcome.timeout_points, 3u);
}

// A sink that notes when each row arrived.
class timing_sink final : public sched::result_sink {
public:
  void record(std::size_t, std::size_t, const point& p, const result_record& r) override {
    rows.push_back({std::chrono::steady_clock::now(), r.get("wall_s"), p.options.at("memory-mb")});
  }
  void flush() override {}
  struct row {
    std::chrono::steady_clock::time_point arrival;
    double wall_s;
    std::string memory;
  };
  std::vector<row> rows;
};

TEST(Sweep, MemoryBudgetSerialisesPointsThatDoNotFitTogether) {
  const auto comm = world();
  std::vector<work_unit> units;
  for (int i = 0; i < 6; ++i) units.push_back({{synthetic(1 + i, 0, 1, {{"cost-us", "100000"}, {"memory-mb", "40"}})}});
  units.push_back({{synthetic(10, 0, 1, {{"memory-mb", "100"}})}}); // larger than any node budget
  auto options = quiet_options();
  options.mem_per_node = 64ULL << 20; // one 40 MiB point at a time per node
  timing_sink sink;
  const auto outcome = sched::run_sweep(comm, units, nullptr, &sink, options);
  EXPECT_EQ(outcome.exit_code, 0);
  if (comm.rank() != 0) return;
  ASSERT_EQ(sink.rows.size(), 7u);
  EXPECT_EQ(sink.rows.front().memory, "100"); // recorded as failed before anything runs
  EXPECT_TRUE(std::isnan(sink.rows.front().wall_s));
  EXPECT_EQ(outcome.failed_points, 1u);
  // Each point ran within [arrival − latency − wall, arrival − latency]; consecutive points
  // must not overlap (tolerance: the reporting latency, far below the 100 ms of a point).
  for (std::size_t i = 2; i < sink.rows.size(); ++i) {
    const auto& before = sink.rows[i - 1];
    const auto& next = sink.rows[i];
    const double gap = std::chrono::duration<double>(next.arrival - before.arrival).count() - next.wall_s;
    EXPECT_GT(gap, -0.03) << "points " << i - 1 << " and " << i << " ran at the same time on one node";
  }
}

TEST(Sweep, RejectsRanksWithDifferentUnits) {
  const auto comm = world();
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks";
  std::vector<work_unit> units{{{synthetic(1, 0, 1, {})}}};
  if (comm.rank() == 1) units[0].points[0].seed = 2;
  sched::memory_sink sink;
  EXPECT_THROW((void)sched::run_sweep(comm, units, nullptr, &sink, quiet_options()), std::runtime_error);
}
} // namespace

int main(int argc, char** argv) {
  int failed = 0;
  {
    boost::mpi::environment environment(argc, argv, boost::mpi::threading::multiple);
    ::testing::InitGoogleTest(&argc, argv);
    // Only rank 0 prints (all ranks still run every test: each one is collective).
    if (boost::mpi::communicator().rank() != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
    }
    failed = RUN_ALL_TESTS();
    failed = boost::mpi::all_reduce(boost::mpi::communicator(), failed, boost::mpi::maximum<int>());
  }
  // A solver thread abandoned by the wall-time test may still be spinning: leave without
  // running static destructors under its feet.
  if (sched::solver_threads_abandoned()) std::_Exit(failed);
  return failed;
}
