// Query operations on a small archive with known contents, written with the archive's writer
// and read back through the reader (the same path as `slr-sweep query`).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
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
          row.values["free_entropy"] = r + 0.01 * repeat; // smallest at r = 0.1, at every alpha
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

TEST_F(QueryTest, AFilterThatKeepsNothingSaysWhy) {
  // A misspelt value: the condition and the values its column holds.
  EXPECT_EQ(query::explain_no_match(points(), "activation=softmx", {}),
            "--where: 'activation=softmx' matches no row (activation holds linear, softmax)");
  // Each condition matches rows, but not together.
  EXPECT_EQ(query::explain_no_match(points(), "method=population,alpha=4", {}),
            "--where: each condition matches rows, but no row meets all of 'method=population,alpha=4'");
  // A status nobody has, and a status the --where rows do not have.
  EXPECT_TRUE(query::explain_no_match(points(), "", {"timeout"}).starts_with("--status: no row has status timeout "
                                                                             "(statuses present: "));
  EXPECT_TRUE(query::explain_no_match(points(), "alpha=4", {"failed"}).starts_with(
      "--where and --status each match rows, but none together (statuses of the rows --where keeps: ok"));
  // Filters that keep rows need no explanation.
  EXPECT_EQ(query::explain_no_match(points(), "activation=softmax", {"ok"}), "");
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

TEST_F(QueryTest, MinOverMinimisesAChosenColumn) {
  query::query_options options;
  options.where = "method=fixed-point";
  options.min_over = {"r_k", "r_v"};
  options.minimise = "free_entropy";
  options.columns = {"activation", "alpha", "repeat", "r_k", "free_entropy"};
  auto t = query::run_query(points(), options).rows;
  ASSERT_EQ(t.rows(), 8u);
  for (std::size_t r = 0; r < t.rows(); ++r) EXPECT_EQ(t.at("r_k", "").numbers[r], 0.1); // not best_r(alpha)
  // After --group-by: the mean of the chosen column.
  options.group_by = {"activation", "alpha", "r_k", "r_v"};
  options.columns = {"free_entropy"};
  options.statistics = {"mean"};
  t = query::run_query(points(), options).rows;
  ASSERT_EQ(t.rows(), 4u);
  for (std::size_t r = 0; r < t.rows(); ++r) {
    EXPECT_EQ(t.at("r_k", "").numbers[r], 0.1);
    EXPECT_NEAR(t.at("free_entropy_mean", "").numbers[r], 0.105, 1e-15);
  }
  options.minimise = "no_such_column";
  EXPECT_THROW((void)query::run_query(points(), options), std::invalid_argument);
  options.minimise = "alpha"; // a parameter, not a result
  options.group_by.clear();
  options.statistics.clear();
  EXPECT_THROW((void)query::run_query(points(), options), std::invalid_argument);
  options.min_over.clear();
  options.minimise = "free_entropy"; // only with --min-over
  EXPECT_THROW((void)query::run_query(points(), options), std::invalid_argument);
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

TEST_F(QueryTest, GroupByColumnsNameAggregatesExactly) {
  query::query_options options;
  options.where = "method=fixed-point";
  options.statuses = {"ok"};
  options.group_by = {"activation", "alpha", "r_k"};
  options.columns = {"count", "test_risk_mean", "test_risk_count"};
  auto t = query::run_query(points(), options).rows;
  EXPECT_EQ(t.names(), (std::vector<std::string>{"activation", "alpha", "r_k", "count", "test_risk_mean",
                                                 "test_risk_count"}));
  ASSERT_EQ(t.rows(), 8u);
  EXPECT_EQ(t.at("count", "").numbers[0], 2.0);
  EXPECT_NEAR(t.at("test_risk_mean", "").numbers[0],
              (risk_of("linear", 1.0, 0.1, 0) + risk_of("linear", 1.0, 0.1, 1)) / 2, 1e-15);
  // With --min-over: still exactly the columns asked for (the minimised mean is not appended).
  options.group_by = {"activation", "alpha", "r_k", "r_v"};
  options.min_over = {"r_k", "r_v"};
  options.columns = {"r_k", "test_risk_mean"};
  t = query::run_query(points(), options).rows;
  EXPECT_EQ(t.names(), (std::vector<std::string>{"activation", "alpha", "r_k", "r_v", "test_risk_mean"}));
  ASSERT_EQ(t.rows(), 4u);
  for (std::size_t r = 0; r < t.rows(); ++r)
    EXPECT_EQ(t.at("r_k", "").numbers[r], best_r(t.at("alpha", "").numbers[r]));
  // A statistic that --stats leaves out is refused by name.
  options.min_over.clear();
  options.group_by = {"activation", "alpha"};
  options.columns = {"test_risk_max"};
  options.statistics = {"mean"};
  EXPECT_THROW((void)query::run_query(points(), options), std::invalid_argument);
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

// The fixed-point rows of known_rows(): r_k and r_v are zipped (r_k = r_v), so r_v is a coordinate
// along r_k rather than a dimension of its own (before the dimensions followed functional
// dependence, r_v was a fifth axis and the off-diagonal r_k != r_v half of the grid was NaN).
TEST_F(QueryTest, GridPutsRowsInTheirCellsAndNaNElsewhere) {
  const auto t = query::filter(points(), "method=fixed-point"); // with the failed alpha = 2 row
  const auto build = query::make_grid(t, {});
  const auto& axes = build.data.axes;
  ASSERT_EQ(axes.size(), 4u); // activation, alpha, r_k (with r_v), repeat
  EXPECT_EQ(axes[0].name, "activation");
  EXPECT_EQ(axes[0].texts, (std::vector<std::string>{"linear", "softmax"}));
  EXPECT_EQ(axes[1].name, "alpha");
  EXPECT_EQ(axes[1].numbers, (std::vector<double>{1.0, 2.0, 4.0}));
  EXPECT_EQ(axes[2].name, "r_k");
  EXPECT_EQ(axes[2].numbers, (std::vector<double>{0.1, 1.0}));
  EXPECT_EQ(axes[3].name, "repeat");
  EXPECT_EQ(axes[3].numbers, (std::vector<double>{0.0, 1.0}));
  ASSERT_EQ(build.data.coordinates.size(), 1u);
  EXPECT_EQ(build.data.coordinates[0].name, "r_v");
  EXPECT_EQ(build.data.coordinates[0].axis, 2u);
  EXPECT_EQ(build.data.coordinates[0].numbers, (std::vector<double>{0.1, 1.0}));
  EXPECT_EQ(build.duplicate_rows, 0u);
  const auto& risk = build.data.variables.front();
  ASSERT_EQ(risk.name, "test_risk");
  ASSERT_EQ(risk.values.size(), 24u);
  const auto& status = build.data.text_variables.front().values;
  std::size_t missing = 0;
  for (std::size_t a = 0; a < 2; ++a)
    for (std::size_t al = 0; al < 3; ++al)
      for (std::size_t rk = 0; rk < 2; ++rk)
        for (std::size_t rep = 0; rep < 2; ++rep) {
          const auto cell = ((a * 3 + al) * 2 + rk) * 2 + rep;
          const double v = risk.values[cell];
          if (al == 1) { // alpha = 2: only the failed softmax, r = 1, repeat 0 row (no risk)
            EXPECT_TRUE(std::isnan(v));
            EXPECT_EQ(status[cell], a == 1 && rk == 1 && rep == 0 ? "failed" : "");
            ++missing;
          } else {
            EXPECT_EQ(v, risk_of(axes[0].texts[a], axes[1].numbers[al], axes[2].numbers[rk],
                                 static_cast<unsigned>(rep)));
            EXPECT_EQ(status[cell], "ok");
          }
        }
  EXPECT_EQ(missing, 8u);
  EXPECT_EQ(build.data.attributes.at("task"), "spiked");
  EXPECT_EQ(build.data.attributes.count("r_v"), 0u); // a coordinate, not a constant
  EXPECT_THROW((void)query::make_grid(t, {{"alpha"}, {}, {}}), std::invalid_argument); // activation varies too
}

// Rows of a full rectangular job: activation x (alpha, D) zipped x (r_k, r_v) zipped x 2 repeats.
constexpr double rect_alpha[] = {1.0, 2.0, 4.0}, rect_D[] = {100, 70, 50};
constexpr double rect_r_k[] = {0.1, 1.0}, rect_r_v[] = {0.01, 0.5};
double rect_risk(const std::string& activation, double alpha, double r_k, unsigned repeat) {
  return (activation == "softmax" ? 0.25 : 0.75) + 1.0 / alpha + 0.125 * r_k + 0.0625 * repeat;
}
std::vector<synthetic_row> rectangular_rows() {
  std::vector<synthetic_row> rows;
  // Written in an order unlike the grid's, so that the cells come from the values, not the order.
  for (unsigned repeat : {1u, 0u})
    for (std::size_t r = 0; r < 2; ++r)
      for (std::size_t a = 3; a-- > 0;)
        for (const char* activation : {"softmax", "linear"}) {
          auto row = query::testing::make_row("erm", "spiked", activation, 1.0, rect_alpha[a], rect_r_k[r], repeat);
          row.r_v = rect_r_v[r];
          row.options["D"] = grid::format_number(rect_D[a]);
          row.options["tol"] = "1e-06"; // a constant option: a root attribute
          row.values["test_risk"] = rect_risk(activation, rect_alpha[a], rect_r_k[r], repeat);
          row.values["train_loss"] = rect_D[a] + rect_r_v[r];
          rows.push_back(row);
        }
  return rows;
}

TEST_F(QueryTest, GridOfARectangularJobHasOneDimensionPerZippedGroup) {
  const auto path = *directory_ / "rectangular.h5";
  query::testing::write_archive(path, rectangular_rows());
  const auto t = query::load_archive(path);
  ASSERT_EQ(t.rows(), 24u);
  query::grid_options options;
  options.descriptions = query::parse_parameter_descriptions(
      R"({"alpha": {"long_name": "samples per dimension", "units": ""}, "D": {"long_name": "dimension", "units": "features"}})");
  const auto build = query::make_grid(t, options);
  const auto& data = build.data;
  std::vector<std::string> names;
  for (const auto& axis : data.axes) names.push_back(axis.name);
  ASSERT_EQ(names, (std::vector<std::string>{"activation", "alpha", "r_k", "repeat"}));
  EXPECT_EQ(data.axes[0].texts, (std::vector<std::string>{"linear", "softmax"}));
  EXPECT_EQ(data.axes[1].numbers, (std::vector<double>{1.0, 2.0, 4.0}));
  EXPECT_EQ(data.axes[2].numbers, (std::vector<double>{0.1, 1.0}));
  EXPECT_EQ(data.axes[3].numbers, (std::vector<double>{0.0, 1.0}));
  // Coordinates in parameter order: r_v (a model parameter) before D (an ERM option).
  ASSERT_EQ(data.coordinates.size(), 2u);
  EXPECT_EQ(data.coordinates[0].name, "r_v");
  EXPECT_EQ(data.coordinates[0].axis, 2u);
  EXPECT_EQ(data.coordinates[0].numbers, (std::vector<double>{0.01, 0.5}));
  EXPECT_EQ(data.coordinates[1].name, "D");
  EXPECT_EQ(data.coordinates[1].axis, 1u);
  EXPECT_FALSE(data.coordinates[1].is_text);
  EXPECT_EQ(data.coordinates[1].numbers, (std::vector<double>{100, 70, 50}));
  // Descriptions: long_name from the archive's, else the name; units where given.
  EXPECT_EQ(data.axes[1].long_name, "samples per dimension");
  EXPECT_EQ(data.axes[1].units, "");
  EXPECT_EQ(data.coordinates[1].long_name, "dimension");
  EXPECT_EQ(data.coordinates[1].units, "features");
  EXPECT_EQ(data.axes[3].long_name, "repeat");
  EXPECT_EQ(data.coordinates[0].long_name, "r_v");
  EXPECT_EQ(data.attributes.at("tol"), "1e-06");
  EXPECT_EQ(data.attributes.at("method"), "erm");
  EXPECT_EQ(data.attributes.count("D"), 0u);
  EXPECT_EQ(build.duplicate_rows, 0u);
  // Every cell of every variable holds its row's value: no NaN anywhere.
  ASSERT_EQ(data.variables.size(), 2u);
  for (const auto& v : data.variables) {
    ASSERT_EQ(v.values.size(), 24u) << v.name;
    for (std::size_t a = 0; a < 2; ++a)
      for (std::size_t al = 0; al < 3; ++al)
        for (std::size_t rk = 0; rk < 2; ++rk)
          for (unsigned rep = 0; rep < 2; ++rep) {
            const double value = v.values[((a * 3 + al) * 2 + rk) * 2 + rep];
            const double expected = v.name == "test_risk"
                                        ? rect_risk(data.axes[0].texts[a], rect_alpha[al], rect_r_k[rk], rep)
                                        : rect_D[al] + rect_r_v[rk];
            EXPECT_EQ(value, expected) << v.name << " " << a << al << rk << rep;
          }
  }
  for (const auto& s : data.text_variables.front().values) EXPECT_EQ(s, "ok");

  // --axes: the named dimensions, in that order; the zipped partners become their coordinates.
  const auto by_d = query::make_grid(t, {{"repeat", "D", "activation", "r_v"}, {"test_risk"}, {}});
  names.clear();
  for (const auto& axis : by_d.data.axes) names.push_back(axis.name);
  EXPECT_EQ(names, (std::vector<std::string>{"repeat", "D", "activation", "r_v"}));
  EXPECT_EQ(by_d.data.axes[1].numbers, (std::vector<double>{50, 70, 100}));
  ASSERT_EQ(by_d.data.coordinates.size(), 2u);
  EXPECT_EQ(by_d.data.coordinates[0].name, "alpha");
  EXPECT_EQ(by_d.data.coordinates[0].axis, 1u);
  EXPECT_EQ(by_d.data.coordinates[0].numbers, (std::vector<double>{4.0, 2.0, 1.0}));
  EXPECT_EQ(by_d.data.coordinates[1].name, "r_k");
  EXPECT_EQ(by_d.data.coordinates[1].axis, 3u);
  ASSERT_EQ(by_d.data.variables.size(), 1u);
  // repeat 1, D = 50 (alpha 4), softmax, r_v = 0.5 (r_k = 1)
  EXPECT_EQ(by_d.data.variables[0].values[((1 * 3 + 0) * 2 + 1) * 2 + 1], rect_risk("softmax", 4.0, 1.0, 1));
  try {
    (void)query::make_grid(t, {{"activation", "alpha", "repeat"}, {}, {}});
    ADD_FAILURE() << "r_k varies and is not a function of an axis";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with("--axes: parameter 'r_k' varies")) << e.what();
  }
}

// An archive of several methods: each method's options (NaN for the other methods) are
// coordinates of `method`, not dimensions (before, every option was an axis of its own).
TEST_F(QueryTest, GridOfSeveralMethodsKeepsTheirOptionsAsCoordinatesOfMethod) {
  std::vector<synthetic_row> rows;
  for (const char* activation : {"softmax", "linear"}) {
    for (const double alpha : {1.0, 2.0})
      for (const double r : {0.1, 1.0}) {
        auto row = query::testing::make_row("fixed-point", "spiked", activation, 1.0, alpha, r);
        row.options = {{"samples", "500"}, {"max-iter", "60"}, {"init", "informed"}};
        row.values["test_risk"] = 1 + alpha + r;
        rows.push_back(row);
      }
    auto population = query::testing::make_row("population", "spiked", activation, 1.0);
    population.options = {{"samples", "2000"}, {"cap", "10000"}};
    population.values["risk"] = activation == std::string("softmax") ? 0.25 : 0.5;
    rows.push_back(population);
  }
  auto bayes = query::testing::make_row("bayes", "spiked", "softmax", 1.0);
  bayes.options = {{"samples", "20000"}};
  bayes.values["risk"] = 0.125;
  rows.push_back(bayes);
  for (const double alpha : {1.0, 2.0})
    for (unsigned repeat = 0; repeat < 2; ++repeat) {
      auto erm = query::testing::make_row("erm", "spiked", "softmax", 1.0, alpha, 1.0, repeat);
      erm.options = {{"D", "40"}, {"init", "random"}};
      erm.values["test_risk"] = 2 + alpha + repeat;
      rows.push_back(erm);
    }
  const auto path = *directory_ / "mixed.h5";
  query::testing::write_archive(path, rows);
  const auto t = query::load_archive(path);
  ASSERT_EQ(t.rows(), 15u);
  const auto build = query::make_grid(t, {});
  const auto& data = build.data;
  std::vector<std::string> names;
  for (const auto& axis : data.axes) names.push_back(axis.name);
  ASSERT_EQ(names, (std::vector<std::string>{"method", "activation", "alpha", "r_k", "repeat"}));
  EXPECT_EQ(data.axes[0].texts, (std::vector<std::string>{"bayes", "erm", "fixed-point", "population"}));
  EXPECT_EQ(data.axes[2].numbers.size(), 3u); // 1, 2 and NaN (the population-level methods)
  EXPECT_TRUE(std::isnan(data.axes[2].numbers[2]));
  std::map<std::string, std::size_t> axis_of;
  const archive::grid_coordinate* samples = nullptr;
  const archive::grid_coordinate* init = nullptr;
  for (const auto& c : data.coordinates) {
    axis_of[c.name] = c.axis;
    if (c.name == "samples") samples = &c;
    if (c.name == "init") init = &c;
  }
  EXPECT_EQ(axis_of, (std::map<std::string, std::size_t>{
                         {"r_v", 3}, {"samples", 0}, {"max-iter", 0}, {"init", 0}, {"cap", 0}, {"D", 0}}));
  ASSERT_NE(samples, nullptr);
  ASSERT_EQ(samples->numbers.size(), 4u);
  EXPECT_EQ(samples->numbers[0], 20000);
  EXPECT_TRUE(std::isnan(samples->numbers[1])); // erm has no samples
  EXPECT_EQ(samples->numbers[2], 500);
  EXPECT_EQ(samples->numbers[3], 2000);
  ASSERT_NE(init, nullptr);
  EXPECT_TRUE(init->is_text);
  EXPECT_EQ(init->texts, (std::vector<std::string>{"", "random", "informed", ""}));
  // 4 methods x 2 activations x 3 alpha x 3 r_k (0.1, 1, NaN) x 2 repeats.
  ASSERT_EQ(data.variables.size(), 2u);
  const auto& risk = data.variables[0].name == "risk" ? data.variables[0] : data.variables[1];
  ASSERT_EQ(risk.values.size(), 144u);
  const auto cell = [](std::size_t m, std::size_t a, std::size_t al, std::size_t rk, std::size_t rep) {
    return (((m * 2 + a) * 3 + al) * 3 + rk) * 2 + rep;
  };
  EXPECT_EQ(risk.values[cell(0, 1, 2, 2, 0)], 0.125); // bayes, softmax, alpha NaN, r_k NaN, repeat 0
  EXPECT_EQ(risk.values[cell(3, 0, 2, 2, 0)], 0.5);   // population, linear
  EXPECT_EQ(std::count_if(risk.values.begin(), risk.values.end(), [](double x) { return !std::isnan(x); }), 3);
  EXPECT_EQ(build.duplicate_rows, 0u);
}

// The length law: with fixed lengths L_pmf is a coordinate of L; once a pmf occurs (L is NaN for
// it) L_pmf is the dimension and L its coordinate, at L's place among the dimensions.
TEST(Grid, LengthLawAndFixedLength) {
  using pv = grid::parameter_value;
  const auto row = [](std::int64_t L, const std::string& law, const std::string& activation, double risk) {
    std::vector<pv> cells{pv::of_text("task", "spiked")};
    if (L > 0) cells.push_back(pv::of_integer("L", L));
    cells.push_back(pv::of_text("L_pmf", law));
    cells.push_back(pv::of_text("activation", activation));
    grid::result_record record;
    record.set("risk", risk);
    return archive::make_point_row("population", std::move(cells), 0, static_cast<std::uint64_t>(risk * 1000), 1,
                                   record);
  };
  std::vector<archive::point_row> fixed;
  for (const char* activation : {"softmax", "linear"}) {
    fixed.push_back(row(3, "3", activation, 0.5));
    fixed.push_back(row(10, "10", activation, 0.25));
  }
  const auto lengths = query::make_grid(query::from_rows(fixed), {});
  ASSERT_EQ(lengths.data.axes.size(), 2u);
  EXPECT_EQ(lengths.data.axes[0].name, "L");
  EXPECT_EQ(lengths.data.axes[0].numbers, (std::vector<double>{3, 10}));
  EXPECT_EQ(lengths.data.axes[1].name, "activation");
  ASSERT_EQ(lengths.data.coordinates.size(), 1u);
  EXPECT_EQ(lengths.data.coordinates[0].name, "L_pmf");
  EXPECT_EQ(lengths.data.coordinates[0].texts, (std::vector<std::string>{"3", "10"}));

  auto with_pmf = fixed;
  with_pmf.push_back(row(0, "1:0.5,3:0.5", "softmax", 0.125));
  with_pmf.push_back(row(0, "1:0.25,3:0.75", "softmax", 0.375));
  const auto laws = query::make_grid(query::from_rows(with_pmf), {});
  ASSERT_EQ(laws.data.axes.size(), 2u);
  EXPECT_EQ(laws.data.axes[0].name, "L_pmf");
  // Text sorts by bytes: "10" < "1:…" < "3".
  EXPECT_EQ(laws.data.axes[0].texts, (std::vector<std::string>{"10", "1:0.25,3:0.75", "1:0.5,3:0.5", "3"}));
  EXPECT_EQ(laws.data.axes[1].name, "activation");
  ASSERT_EQ(laws.data.coordinates.size(), 1u);
  EXPECT_EQ(laws.data.coordinates[0].name, "L");
  EXPECT_EQ(laws.data.coordinates[0].axis, 0u);
  ASSERT_EQ(laws.data.coordinates[0].numbers.size(), 4u);
  EXPECT_EQ(laws.data.coordinates[0].numbers[0], 10);
  EXPECT_TRUE(std::isnan(laws.data.coordinates[0].numbers[1]));
  EXPECT_TRUE(std::isnan(laws.data.coordinates[0].numbers[2]));
  EXPECT_EQ(laws.data.coordinates[0].numbers[3], 3);
  // Cells: L_pmf x activation (linear, softmax); the pmf rows are softmax.
  const auto& risk = laws.data.variables.at(0).values;
  ASSERT_EQ(risk.size(), 8u);
  EXPECT_EQ(risk[0], 0.25);
  EXPECT_EQ(risk[1], 0.25);
  EXPECT_TRUE(std::isnan(risk[2]));
  EXPECT_EQ(risk[3], 0.375);
  EXPECT_TRUE(std::isnan(risk[4]));
  EXPECT_EQ(risk[5], 0.125);
  EXPECT_EQ(risk[6], 0.5);
  EXPECT_EQ(risk[7], 0.5);
}

TEST(Grid, ParameterDescriptions) {
  EXPECT_TRUE(query::parse_parameter_descriptions("").empty());
  EXPECT_TRUE(query::parse_parameter_descriptions("{}").empty());
  EXPECT_TRUE(query::parse_parameter_descriptions("not json").empty());
  const auto d = query::parse_parameter_descriptions(
      R"({"nu": {"long_name": "signal strength", "units": ""}, "D": {"long_name": "dimension", "units": "1"}, "x": 3})");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d.at("nu").long_name, "signal strength");
  EXPECT_EQ(d.at("D").units, "1");
}

TEST(Grid, WriterRejectsCoordinatesThatDoNotFitTheirAxis) {
  archive::grid_dataset data;
  data.axes.push_back({"alpha", false, {1.0, 2.0}, {}, "", ""});
  data.coordinates.push_back({"D", 0, false, {100.0}, {}, "", ""});
  const auto path = std::filesystem::temp_directory_path() / ("slr-grid-writer-" + std::to_string(::getpid()) + ".h5");
  EXPECT_THROW(archive::write_grid(path, data), std::invalid_argument); // 1 value for 2
  data.coordinates[0].numbers = {100.0, 70.0};
  data.coordinates[0].axis = 1;
  EXPECT_THROW(archive::write_grid(path, data), std::invalid_argument); // no axis 1
  data.coordinates[0].axis = 0;
  data.coordinates[0].name = "alpha";
  EXPECT_THROW(archive::write_grid(path, data), std::invalid_argument); // name taken
  EXPECT_FALSE(std::filesystem::exists(path));
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
