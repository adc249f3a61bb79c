// Query operations on a small archive with known contents, written with the archive's writer
// and read back through the reader (the same path as `slr-sweep query`).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>
#include <unistd.h>

#include "slr/query/filter.hpp"
#include "slr/query/grid.hpp"
#include "slr/query/output.hpp"
#include "slr/query/query.hpp"
#include "slr/archive/writer.hpp"
#include "synthetic_archive.hpp"

namespace {
using namespace slr;
using query::testing::synthetic_row;
constexpr double inf = std::numeric_limits<double>::infinity();

double base_risk(const std::string& activation) { return activation == "softmax" ? 0.5 : 0.8; }
double best_r(double alpha) { return alpha < 2 ? 1.0 : 0.1; }
// test_risk of the fixed-point rows: minimal at r = best_r(α), 0.01 higher per repeat.
double risk_of(const std::string& activation, double alpha, double r, unsigned repeat) {
  return base_risk(activation) + 0.1 * std::abs(std::log10(r) - std::log10(best_r(alpha))) + 0.01 * repeat;
}

std::vector<synthetic_row> known_rows() {
  std::vector<synthetic_row> rows;
  for (const char* activation : {"softmax", "linear"})
    for (const double alpha : {1.0, 4.0})
      for (const double r : {0.1, 1.0})
        for (unsigned repeat = 0; repeat < 2; ++repeat) {
          auto row = query::testing::make_row("fixed-point", "spiked", activation, 1.0, alpha, r, repeat);
          row.values["test_risk"] = risk_of(activation, alpha, r, repeat);
          rows.push_back(row);
        }
  auto failed = query::testing::make_row("fixed-point", "spiked", "softmax", 1.0, 2.0, 1.0);
  failed.status = grid::status::failed;
  rows.push_back(failed);
  auto population = query::testing::make_row("population", "spiked", "softmax", 1.0);
  population.values["risk"] = 0.45;
  rows.push_back(population);
  auto hard = query::testing::make_row("population", "max", "softmax", inf);
  hard.values["risk"] = 0.0;
  hard.status = grid::status::unbounded;
  rows.push_back(hard);
  return rows;
}

class QueryTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    directory_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                           ("slr-query-test-" + std::to_string(::getpid())));
    std::filesystem::create_directories(*directory_);
    query::testing::write_archive(*directory_ / "known.h5", known_rows());
    points_ = new query::table(query::load_archive(*directory_ / "known.h5"));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*directory_);
    delete points_;
    delete directory_;
  }
  static std::filesystem::path* directory_;
  static query::table* points_;
  const query::table& points() const { return *points_; }
};
std::filesystem::path* QueryTest::directory_ = nullptr;
query::table* QueryTest::points_ = nullptr;

// (method, activation, alpha, r_k, repeat, status) of every row, as a set.
using row_key = std::tuple<std::string, std::string, double, double, double, std::string>;
std::multiset<row_key> keys_of(const query::table& t) {
  std::multiset<row_key> keys;
  for (std::size_t r = 0; r < t.rows(); ++r)
    keys.emplace(t.at("method", "").texts[r], t.at("activation", "").texts[r], t.at("alpha", "").numbers[r],
                 t.at("r_k", "").numbers[r], t.at("repeat", "").numbers[r], t.at("status", "").texts[r]);
  return keys;
}

TEST_F(QueryTest, ReadsEveryRow) {
  EXPECT_EQ(points().rows(), 19u);
  EXPECT_NE(points().find("order_parameters_m_kk"), nullptr); // dots → underscores
}

TEST_F(QueryTest, WhereWithComparisons) {
  const auto t = query::filter(points(), "activation=softmax, alpha>=2");
  const std::multiset<row_key> expected = {
      {"fixed-point", "softmax", 2.0, 1.0, 0, "failed"}, {"fixed-point", "softmax", 4.0, 0.1, 0, "ok"},
      {"fixed-point", "softmax", 4.0, 0.1, 1, "ok"},     {"fixed-point", "softmax", 4.0, 1.0, 0, "ok"},
      {"fixed-point", "softmax", 4.0, 1.0, 1, "ok"}};
  EXPECT_EQ(keys_of(t), expected);
  EXPECT_EQ(query::filter(points(), "alpha<4,alpha>1").rows(), 1u);              // the failed α = 2 row
  EXPECT_EQ(query::filter(points(), "method!=fixed-point").rows(), 2u);
  EXPECT_EQ(query::filter(points(), "activation=softmax|linear,r_k=0.1").rows(), 8u);
  EXPECT_EQ(query::filter(points(), "test_risk<0.55").rows(), 4u); // softmax at the best r, both α, both repeats
}

TEST_F(QueryTest, WhereInfinityNanAndText) {
  const auto hard = query::filter(points(), "nu=inf");
  ASSERT_EQ(hard.rows(), 1u);
  EXPECT_EQ(hard.at("task", "").texts[0], "max");
  EXPECT_EQ(query::filter(points(), "nu<inf").rows(), 18u);
  EXPECT_EQ(query::filter(points(), "alpha=nan").rows(), 2u); // population rows have no α
  EXPECT_EQ(query::filter(points(), "task>=spiked").rows(), 18u); // text compares lexicographically
  EXPECT_EQ(query::filter(points(), "").rows(), 19u);
}

TEST_F(QueryTest, WhereKeepsCommasInsideValues) {
  const auto conditions = query::parse_where("L_pmf=1:0.25,3:0.75,nu=1");
  ASSERT_EQ(conditions.size(), 2u);
  EXPECT_EQ(conditions[0].values, std::vector<std::string>{"1:0.25,3:0.75"});
  EXPECT_EQ(conditions[1].column, "nu");
}

TEST_F(QueryTest, WhereErrorsNameTheArgument) {
  const auto message = [&](const std::string& where) {
    try {
      (void)query::filter(points(), where);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_TRUE(message("colour=red").starts_with("--where: unknown column 'colour'"));
  EXPECT_TRUE(message("nu=abc").starts_with("--where: 'nu=abc': column nu is numeric"));
  EXPECT_TRUE(message("nu").starts_with("--where: 'nu' is not a condition"));
  EXPECT_TRUE(message("nu>nan").starts_with("--where:"));
  EXPECT_TRUE(message("nu=").starts_with("--where: 'nu=' has no value"));
}

TEST_F(QueryTest, StatusFilter) {
  EXPECT_EQ(query::filter_status(points(), {"ok", "unbounded"}).rows(), 18u);
  EXPECT_EQ(query::filter_status(points(), {"failed"}).rows(), 1u);
  EXPECT_THROW((void)query::filter_status(points(), {"fine"}), std::invalid_argument);
}

TEST_F(QueryTest, MinOverKeepsTheBestRegularisationPerRemainingKey) {
  query::query_options options;
  options.where = "method=fixed-point";
  options.min_over = {"r_k", "r_v"};
  options.columns = {"activation", "alpha", "repeat", "test_risk"};
  const auto result = query::run_query(points(), options);
  // The failed α = 2 row has no risk: its combination is left out and counted.
  EXPECT_EQ(result.groups_without_risk, 1u);
  auto t = result.rows;
  ASSERT_EQ(t.rows(), 8u);
  // --columns is honoured exactly; the winners' r are asked for below.
  EXPECT_EQ(t.names(), (std::vector<std::string>{"activation", "alpha", "repeat", "test_risk"}));
  options.columns = {"activation", "alpha", "repeat", "test_risk", "r_k", "r_v"};
  t = query::run_query(points(), options).rows;
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const auto& activation = t.at("activation", "").texts[r];
    const double alpha = t.at("alpha", "").numbers[r];
    const auto repeat = static_cast<unsigned>(t.at("repeat", "").numbers[r]);
    EXPECT_EQ(t.at("r_k", "").numbers[r], best_r(alpha)) << activation << " alpha " << alpha;
    EXPECT_EQ(t.at("r_v", "").numbers[r], best_r(alpha));
    EXPECT_DOUBLE_EQ(t.at("test_risk", "").numbers[r], base_risk(activation) + 0.01 * repeat);
  }
}

TEST_F(QueryTest, MinOverFallsBackToRisk) {
  query::query_options options;
  options.where = "method=population";
  options.min_over = {"nu"};
  options.columns = {"task", "nu", "risk"};
  const auto t = query::run_query(points(), options).rows;
  ASSERT_EQ(t.rows(), 2u); // one per task
  EXPECT_EQ(t.at("task", "").texts[0], "max");
  EXPECT_EQ(t.at("risk", "").numbers[0], 0.0);
  EXPECT_EQ(t.at("nu", "").numbers[0], inf);
  EXPECT_EQ(t.at("risk", "").numbers[1], 0.45);
}

TEST_F(QueryTest, GroupByAggregatesOverRepeats) {
  query::query_options options;
  options.where = "method=fixed-point";
  options.statuses = {"ok"};
  options.group_by = {"activation", "alpha", "r_k"};
  options.columns = {"test_risk"};
  options.statistics = {"mean", "std", "min", "max", "count"};
  const auto t = query::run_query(points(), options).rows;
  ASSERT_EQ(t.rows(), 8u);
  EXPECT_EQ(t.names(), (std::vector<std::string>{"activation", "alpha", "r_k", "count", "test_risk_mean",
                                                 "test_risk_std", "test_risk_min", "test_risk_max",
                                                 "test_risk_count"}));
  // Sorted by the keys: linear before softmax, α and r ascending.
  EXPECT_EQ(t.at("activation", "").texts[0], "linear");
  EXPECT_EQ(t.at("alpha", "").numbers[0], 1.0);
  EXPECT_EQ(t.at("r_k", "").numbers[0], 0.1);
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const auto& activation = t.at("activation", "").texts[r];
    const double alpha = t.at("alpha", "").numbers[r], rk = t.at("r_k", "").numbers[r];
    const double lo = risk_of(activation, alpha, rk, 0), hi = risk_of(activation, alpha, rk, 1);
    EXPECT_EQ(t.at("count", "").numbers[r], 2.0);
    EXPECT_NEAR(t.at("test_risk_mean", "").numbers[r], (lo + hi) / 2, 1e-15);
    EXPECT_NEAR(t.at("test_risk_std", "").numbers[r], std::abs(hi - lo) / std::sqrt(2.0), 1e-15);
    EXPECT_EQ(t.at("test_risk_min", "").numbers[r], lo);
    EXPECT_EQ(t.at("test_risk_max", "").numbers[r], hi);
    EXPECT_EQ(t.at("test_risk_count", "").numbers[r], 2.0);
  }
}

TEST_F(QueryTest, GroupByThenMinOver) {
  query::query_options options;
  options.where = "method=fixed-point";
  options.statuses = {"ok"};
  options.group_by = {"activation", "alpha", "r_k", "r_v"};
  options.min_over = {"r_k", "r_v"};
  options.statistics = {"mean"};
  const auto t = query::run_query(points(), options).rows;
  ASSERT_EQ(t.rows(), 4u);
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const double alpha = t.at("alpha", "").numbers[r];
    EXPECT_EQ(t.at("r_k", "").numbers[r], best_r(alpha));
    EXPECT_NEAR(t.at("test_risk_mean", "").numbers[r], base_risk(t.at("activation", "").texts[r]) + 0.005, 1e-15);
  }
  options.group_by = {"activation", "alpha"};
  EXPECT_THROW((void)query::run_query(points(), options), std::invalid_argument); // r_k is not a key
}

TEST_F(QueryTest, CompactDefaultColumns) {
  query::query_options options;
  options.where = "method=fixed-point,activation=softmax,alpha=4";
  const auto t = query::run_query(points(), options).rows;
  EXPECT_EQ(t.names(), (std::vector<std::string>{"method", "r_k", "r_v", "repeat", "status", "test_risk"}));
}

TEST_F(QueryTest, OutputFormats) {
  query::query_options options;
  options.where = "method=population";
  options.columns = {"task", "nu", "alpha", "status", "risk"};
  const auto t = query::run_query(points(), options).rows;
  std::ostringstream csv, jsonl, table;
  query::write_output(csv, t, query::output_format::csv);
  // The archive keeps its rows sorted by method, task, …: max before spiked.
  EXPECT_EQ(csv.str(), "task,nu,alpha,status,risk\nmax,inf,nan,unbounded,0\nspiked,1,nan,ok,0.45\n");
  query::write_output(jsonl, t, query::output_format::jsonl);
  std::istringstream lines(jsonl.str());
  std::string line;
  std::vector<nlohmann::json> objects;
  while (std::getline(lines, line)) objects.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_TRUE(objects[0]["alpha"].is_null());
  EXPECT_EQ(objects[0]["nu"], "inf");
  EXPECT_EQ(objects[1]["risk"], 0.45);
  query::write_output(table, t, query::output_format::table);
  EXPECT_EQ(table.str(), "task     nu  alpha  status     risk\n"
                         "------  ---  -----  ---------  ----\n"
                         "max     inf    nan  unbounded     0\n"
                         "spiked    1    nan  ok         0.45\n");
  EXPECT_THROW((void)query::parse_output_format("xml"), std::invalid_argument);
}

TEST_F(QueryTest, GridPutsRowsInTheirCellsAndNaNElsewhere) {
  const auto t = query::filter(points(), "method=fixed-point,status=ok");
  const auto build = query::make_grid(t, {});
  const auto& axes = build.data.axes;
  ASSERT_EQ(axes.size(), 5u); // activation, alpha, r_k, r_v, repeat vary
  EXPECT_EQ(axes[0].name, "activation");
  EXPECT_EQ(axes[0].texts, (std::vector<std::string>{"linear", "softmax"}));
  EXPECT_EQ(axes[1].numbers, (std::vector<double>{1.0, 4.0}));
  EXPECT_EQ(axes[4].name, "repeat");
  EXPECT_EQ(build.duplicate_rows, 0u);
  const auto& risk = build.data.variables.front();
  ASSERT_EQ(risk.name, "test_risk");
  ASSERT_EQ(risk.values.size(), 32u);
  std::size_t missing = 0;
  for (std::size_t a = 0; a < 2; ++a)
    for (std::size_t al = 0; al < 2; ++al)
      for (std::size_t rk = 0; rk < 2; ++rk)
        for (std::size_t rv = 0; rv < 2; ++rv)
          for (std::size_t rep = 0; rep < 2; ++rep) {
            const double v = risk.values[(((a * 2 + al) * 2 + rk) * 2 + rv) * 2 + rep];
            if (rk != rv) {
              EXPECT_TRUE(std::isnan(v));
              ++missing;
            } else {
              EXPECT_EQ(v, risk_of(axes[0].texts[a], axes[1].numbers[al], axes[2].numbers[rk],
                                   static_cast<unsigned>(rep)));
            }
          }
  EXPECT_EQ(missing, 16u);
  EXPECT_EQ(build.data.attributes.at("task"), "spiked");
  EXPECT_THROW((void)query::make_grid(t, {{"alpha"}, {}}), std::invalid_argument); // activation varies too
}

} // namespace

namespace {
// A query opens the snapshot read-only while a sweep holds the archive's write lock and keeps
// appending: it sees the points of the last snapshot and never blocks or disturbs the writer.
TEST(QueryWhileRunning, ReadsTheSnapshotOfARunningSweep) {
  const auto directory = std::filesystem::temp_directory_path() / ("slr-query-running-" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  const auto path = directory / "running.h5";
  const slr::archive::journal_job job{"name = \"running\"\nseed = 1\n[[method]]\nname = \"population\"\n",
                                      "0f1e2d3c4b5a6978", "<t>", "running"};
  slr::archive::writer_options options;
  options.rebuild_every_points = 1000000;
  options.rebuild_every_seconds = 1e9;
  auto writer = slr::archive::writer::create(path, job, slr::archive::writer::if_exists::fail, options);
  writer.begin_run({1, "testhost", "test"});
  const auto record = [&](double nu) {
    slr::grid::point p;
    p.method = "population";
    p.problem.task = slr::model::task(slr::model::task_kind::spiked, nu);
    slr::grid::result_record r;
    r.set("risk", 1 / (1 + nu));
    writer.record(slr::query::testing::row_of(p, 0, slr::query::testing::point_id(p, 0), r));
  };
  record(1.0);
  record(2.0);
  writer.rebuild_now();
  record(3.0); // journaled, not yet in the snapshot
  const auto t = slr::query::load_archive(path);
  EXPECT_EQ(t.rows(), 2u);
  EXPECT_EQ(slr::query::filter(t, "nu>=2").at("risk", "").numbers, std::vector<double>{1.0 / 3.0});
  record(4.0); // the writer carries on after the read
  writer.end_run("complete");
  EXPECT_EQ(slr::query::load_archive(path).rows(), 4u);
  std::filesystem::remove_all(directory);
}
} // namespace
