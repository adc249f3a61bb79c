// A parameter reaches every layer through its declaration alone: a test-only method declares one
// new option (nothing else in the tree knows its name), and the option is then accepted by the
// job parser (as a list, zipped with alpha), validated against its declared range, stored as a
// typed column of the archive, read back, and filtered and selected by the query layer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "slr/archive/reader.hpp"
#include "slr/archive/writer.hpp"
#include "slr/job/expansion.hpp"
#include "slr/job/job_file.hpp"
#include "slr/methods/registry.hpp"
#include "slr/query/query.hpp"
#include "slr/query/table.hpp"
#include "slr/sweep/point_row.hpp"

namespace slr {
namespace {

namespace fs = std::filesystem;

// Registered once per process: a finite-α method with one option of its own, "test-knob".
const methods::method_descriptor& knob_method() {
  static const bool registered = [] {
    methods::method_descriptor m;
    m.name = "test-knob-method";
    m.summary = "TESTING ONLY: echoes its option test-knob as the risk";
    m.finite_alpha = true;
    methods::option_spec knob{"test-knob", grid::value_type::real, "1", "a knob that only this test knows",
                              {}, 0, 10};
    knob.unit = "furlong";
    m.options = {knob};
    m.solve = [](const grid::point& p, const methods::run_context&) {
      grid::result_record r;
      r.set("risk", methods::option_number(p, "test-knob") * p.alpha);
      return r;
    };
    m.cost_seconds = [](const grid::point&) { return 1e-6; };
    m.memory_bytes = [](const grid::point&) { return std::size_t{0}; };
    methods::register_method(std::move(m));
    return true;
  }();
  (void)registered;
  return methods::find_method("test-knob-method");
}

const char* job_text = R"(name = "knob"
seed = 5
[grid]
alpha = [1, 2, 4]
test-knob = [0.5, 1.5, 2.5]
zip = [["alpha", "test-knob"]]
r_k = 0
r_v = 0
[[method]]
name = "test-knob-method"
)";

TEST(DeclaredParameter, ReachesTheJobParserTheArchiveAndQuery) {
  (void)knob_method();
  const auto job = job::parse_job(job_text, "knob.toml");
  const auto units = job::expand(job);
  ASSERT_EQ(job::point_count(units), 3u); // zipped, not a 3 x 3 product
  std::set<std::string> pairs;
  for (const auto& u : units)
    pairs.insert(grid::format_number(u.points[0].point.alpha) + "/" + u.points[0].point.options.at("test-knob"));
  EXPECT_EQ(pairs, (std::set<std::string>{"1/0.5", "2/1.5", "4/2.5"}));

  // Its declared range and type are enforced with the file, field and reason.
  try {
    (void)job::parse_job(std::string(job_text).replace(std::string(job_text).find("2.5"), 3, "25"), "knob.toml");
    FAIL() << "an out-of-range test-knob was accepted";
  } catch (const job::job_error& e) {
    EXPECT_EQ(e.field(), "grid.test-knob[3]") << e.what();
    EXPECT_NE(e.reason().find("out of range"), std::string::npos) << e.what();
  }

  const auto dir = fs::temp_directory_path() / ("slr-knob-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto path = dir / "knob.h5";
  {
    auto writer = archive::writer::create(path, {job.text, job::fingerprint(units), "knob.toml", job.name});
    writer.begin_run({1, "testhost", "test"});
    for (const auto& u : units)
      writer.record(sweep::make_point_row(u.points[0], methods::solve_point(u.points[0].point, {})));
    writer.end_run("complete");
  }
  // A typed column of /points (the archive knows nothing of methods).
  const auto rows = archive::reader(path).points();
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) {
    const auto* knob = row.parameter("test-knob");
    ASSERT_NE(knob, nullptr);
    EXPECT_EQ(knob->type, grid::parameter_value::kind::real);
    EXPECT_EQ(row.values[0], knob->real * row.parameter("alpha")->real); // risk = knob * alpha
  }
  // The query layer filters and selects it like any column.
  query::query_options options;
  options.where = "test-knob>=1.5";
  options.columns = {"alpha", "test-knob", "risk"};
  const auto result = query::run_query(query::load_archive(path), options).rows;
  ASSERT_EQ(result.rows(), 2u);
  EXPECT_EQ(result.names(), (std::vector<std::string>{"alpha", "test-knob", "risk"}));
  const auto& knob = result.at("test-knob", "");
  const auto& risk = result.at("risk", "");
  const auto& alpha = result.at("alpha", "");
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_GE(knob.numbers[r], 1.5);
    EXPECT_EQ(risk.numbers[r], knob.numbers[r] * alpha.numbers[r]);
  }
  fs::remove_all(dir);
}

} // namespace
} // namespace slr
