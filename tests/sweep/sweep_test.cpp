// What the sweep records in the archive: rows of expanded points (every parameter, option,
// identity, seed and result column), the job with the fingerprint of its expansion, extension
// of the stored job (supersets only), and the archive sink (journaled on flush, not before).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "slr/archive/archive_error.hpp"
#include "slr/archive/reader.hpp"
#include "slr/archive/writer.hpp"
#include "slr/job/expansion.hpp"
#include "slr/job/job_file.hpp"
#include "slr/sweep/archive_job.hpp"
#include "slr/sweep/archive_sink.hpp"
#include "slr/sweep/point_row.hpp"

namespace slr::sweep {
namespace {

namespace fs = std::filesystem;

const std::string job_text = R"(
name = "sweep-test"
seed = 99
[grid]
task = ["spiked", "max"]
nu = [1, 2, 3, 4, 5]
repeats = 2
[[method]]
name = "bayes"
samples = 1000
)"; // 20 points

class SweepArchiveTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("slr-sweep-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    job_ = job::parse_job(job_text, "sweep-test.toml");
    units_ = job::expand(job_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static grid::result_record result_for(const job::sweep_point& p) {
    grid::result_record r;
    r.set("risk", static_cast<double>(p.id % 1000) / 1000.0);
    r.set("order_parameters.m_kk", p.point.problem.task.nu());
    r.extra_json = "{\"id\":" + std::to_string(p.id % 100) + "}";
    return r;
  }

  fs::path dir_;
  job::job_spec job_;
  std::vector<job::sweep_unit> units_;
};

TEST_F(SweepArchiveTest, PointRowsCarryEveryParameterAndResultColumn) {
  ASSERT_EQ(units_.size(), 20u);
  for (const auto& u : units_) {
    const auto& p = u.points[0];
    auto record = result_for(p);
    record.method_values.emplace_back("extra_value", 2.5);
    const auto row = make_point_row(p, record);
    EXPECT_EQ(row.point_id, p.id);
    EXPECT_EQ(row.seed, p.point.seed);
    EXPECT_EQ(row.repeat, p.repeat);
    EXPECT_EQ(row.method, "bayes");
    // The typed parameters, as the model and the method declare them; none the point lacks.
    using pv = grid::parameter_value;
    const std::vector<pv> expected = {pv::of_text("task", p.point.problem.task.name()),
                                      pv::of_real("nu", p.point.problem.task.nu()),
                                      pv::of_integer("L", 3),
                                      pv::of_text("L_pmf", "3"),
                                      pv::of_real("delta", 0),
                                      pv::of_text("activation", "softmax"),
                                      pv::of_integer("samples", 1000)};
    EXPECT_EQ(row.parameters, expected);
    EXPECT_EQ(row.status, "ok");
    EXPECT_EQ(row.extra_json, record.extra_json);
    EXPECT_GT(row.completed_unix, 0);
    ASSERT_EQ(row.values.size(), grid::result_columns.size() + 1);
    ASSERT_EQ(row.value_names.size(), row.values.size());
    for (std::size_t c = 0; c < grid::result_columns.size(); ++c) {
      EXPECT_EQ(row.value_names[c], archive::archive_column_name(grid::result_columns[c]));
      const double want = record.values[c];
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(row.values[c])) << row.value_names[c];
      else EXPECT_EQ(row.values[c], want) << row.value_names[c];
    }
    EXPECT_EQ(row.value_names.back(), "extra_value");
    EXPECT_EQ(row.values.back(), 2.5);
  }
}

TEST_F(SweepArchiveTest, TheArchiveHoldsTheJobTextAndTheFingerprintOfItsExpansion) {
  const auto path = dir_ / "job.h5";
  {
    auto w = create_archive(path, job_);
    EXPECT_EQ(w.job_fingerprint(), job::fingerprint(units_));
    EXPECT_EQ(stored_job(w).name, "sweep-test");
    // The same job again: refused (fail) or reopened (reuse_same_job).
  }
  EXPECT_THROW((void)create_archive(path, job_), archive::archive_exists_error);
  EXPECT_NO_THROW((void)create_archive(path, job_, archive::writer::if_exists::reuse_same_job));
  const archive::reader r(path);
  EXPECT_EQ(r.attributes().job_text, job_text);
  EXPECT_EQ(r.attributes().job_fingerprint, job::fingerprint(units_));
  EXPECT_EQ(r.attributes().job_name, "sweep-test");
  EXPECT_EQ(journal_job_of(job_).fingerprint, job::fingerprint(job_));
}

TEST_F(SweepArchiveTest, ExtendAcceptsSupersetsOnly) {
  const auto path = dir_ / "extend.h5";
  auto w = create_archive(path, job_);
  auto bigger_text = job_text;
  bigger_text.replace(bigger_text.find("nu = [1, 2, 3, 4, 5]"), 20, "nu = [1, 2, 3, 4, 5, 6]");
  const auto bigger = job::parse_job(bigger_text, "bigger.toml");
  const auto smaller = job::parse_job("name = \"s\"\nseed = 99\n[[method]]\nname = \"bayes\"\n", "s.toml");
  EXPECT_THROW((void)extend_job(w, smaller), archive::archive_error);
  EXPECT_EQ(w.job_text(), job_text);
  const auto check = extend_job(w, bigger);
  EXPECT_TRUE(check.accepted);
  EXPECT_EQ(check.shared_points, 20u);
  EXPECT_EQ(check.added_points, 4u);
  EXPECT_EQ(w.job_text(), bigger_text);
  EXPECT_EQ(archive::reader(path).attributes().job_fingerprint, job::fingerprint(bigger));
}

TEST_F(SweepArchiveTest, TheArchiveSinkJournalsOnFlush) {
  const auto path = dir_ / "sink.h5";
  auto w = create_archive(path, job_);
  w.begin_run({1, "", "sweep_test"});
  archive_sink sink(w, units_);
  for (std::size_t u = 0; u < 5; ++u) sink.record(u, 0, units_[u].points[0].point, result_for(units_[u].points[0]));
  EXPECT_TRUE(w.done().empty());
  sink.flush();
  EXPECT_EQ(w.done().size(), 5u);
  for (std::size_t u = 0; u < 5; ++u) EXPECT_FALSE(w.needs_run(units_[u].points[0].id, false));
  sink.record(5, 0, units_[5].points[0].point, result_for(units_[5].points[0]));
  sink.checkpoint(); // flushes and rebuilds the .h5
  EXPECT_EQ(archive::reader(path).point_count(), 6u);
  w.end_run("complete");
}

} // namespace
} // namespace slr::sweep
