// The archive: round trip, resume bookkeeping, refusal to overwrite, locking, periodic
// snapshots, extension, journal torn-tail recovery at random byte offsets, damaged journals
// (bit flips: one record lost, never the rest; salvage) and rows merged back from the .h5.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <fstream>
#include <random>

#include "crc32c.hpp"
#include "isolated_read.hpp"
#include "slr/archive/journal.hpp"
#include "slr/archive/reader.hpp"
#include "slr/archive/recover.hpp"
#include "slr/archive/writer.hpp"
#include "slr/grid/result_record.hpp"
#include "slr/model/random.hpp"

namespace slr::archive {
namespace {

namespace fs = std::filesystem;

const std::string job_text = R"(
name = "archive-test"
seed = 99
[grid]
task = ["spiked", "max"]
nu = [1, 2, 3, 4, 5]
repeats = 2
[[method]]
name = "bayes"
samples = 1000
)"; // 20 points

// A point of that job as the archive sees it: identity, repeat, seed and the varied parameters.
struct test_point {
  std::uint64_t id = 0;
  std::uint32_t repeat = 0;
  std::uint64_t seed = 0;
  std::string task;
  double nu = 0;
};

// The 20 points of job_text (the archive stores rows and the job text, and never expands a job).
std::vector<test_point> job_points() {
  std::vector<test_point> points;
  for (const char* task : {"spiked", "max"})
    for (const double nu : {1.0, 2.0, 3.0, 4.0, 5.0})
      for (std::uint32_t repeat = 0; repeat < 2; ++repeat) {
        test_point p;
        p.task = task;
        p.nu = nu;
        p.repeat = repeat;
        p.id = model::stable_hash("bayes;" + p.task + ";nu=" + std::to_string(nu) + ";repeat=" + std::to_string(repeat));
        p.seed = model::derive_seed(99, p.id);
        points.push_back(p);
      }
  return points;
}

class ArchiveTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("slr-archive-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    points_ = job_points();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A deterministic synthetic result per point (the archive does not care where numbers come from).
  static grid::result_record result_for(const test_point& p) {
    grid::result_record r;
    r.set("risk", static_cast<double>(p.id % 1000) / 1000.0);
    r.set("order_parameters.m_kk", p.nu);
    r.set("iterations", p.repeat);
    if (p.id % 7 == 0) {
      r.status = grid::status::failed;
      r.message = "synthetic failure Σ"; // non-ASCII survives
    }
    r.extra_json = "{\"id\":" + std::to_string(p.id % 100) + "}";
    return r;
  }

  // The row of a finished point, as a sweep makes it (values = all grid::result_columns).
  static point_row row_of(const test_point& p, const grid::result_record& r) {
    point_row row;
    row.point_id = p.id;
    row.repeat = p.repeat;
    row.seed = p.seed;
    row.method = "bayes";
    using pv = grid::parameter_value;
    row.parameters = {pv::of_text("task", p.task),       pv::of_real("nu", p.nu),
                      pv::of_integer("L", 3),            pv::of_text("L_pmf", "3"),
                      pv::of_real("delta", 0),           pv::of_text("activation", "softmax"),
                      pv::of_integer("samples", 1000)};
    row.status = std::string(grid::status_name(r.status));
    row.message = r.message;
    row.extra_json = r.extra_json;
    row.completed_unix = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (const auto& column : grid::result_columns) row.value_names.push_back(archive_column_name(column));
    row.values.assign(r.values.begin(), r.values.end());
    return row;
  }
  static point_row row_of(const test_point& p) { return row_of(p, result_for(p)); }

  // The first point of the first `count` units (all by default), one record each, then the run's end.
  void write_complete(const fs::path& path, std::size_t count = SIZE_MAX) const {
    auto w = writer::create(path, job_);
    w.begin_run({1, "", ""});
    for (std::size_t i = 0; i < std::min(count, points_.size()); ++i)
      w.record(row_of(points_[i]));
    w.end_run("complete");
  }

  fs::path dir_;
  const journal_job job_{job_text, "5f0c1e2d3a4b6978", "archive-test.toml", "archive-test"};
  std::vector<test_point> points_;
};

TEST_F(ArchiveTest, RoundTripOfEveryColumnAndAttribute) {
  const auto path = dir_ / "r.h5";
  {
    auto w = writer::create(path, job_);
    w.begin_run({2, "testhost", "slr-sweep run archive-test.toml"});
    std::vector<point_row> batch;
    for (const auto& p : points_) batch.push_back(row_of(p));
    w.record_batch(batch);
    w.end_run("complete");
  }
  reader r(path);
  const auto& a = r.attributes();
  EXPECT_EQ(a.schema_version, 2);
  EXPECT_EQ(a.job_text, job_text);
  EXPECT_EQ(a.job_fingerprint, job_.fingerprint);
  EXPECT_EQ(a.job_name, "archive-test");
  EXPECT_FALSE(a.git_revision.empty());
  EXPECT_TRUE(a.library_versions.contains("hdf5"));
  EXPECT_EQ(a.journal_points, 20u);
  const auto rows = r.points();
  ASSERT_EQ(rows.size(), 20u);
  EXPECT_EQ(r.point_count(), 20u);
  std::map<std::uint64_t, const test_point*> by_id;
  for (const auto& p : points_) by_id[p.id] = &p;
  for (const auto& row : rows) {
    ASSERT_TRUE(by_id.contains(row.point_id));
    const auto& p = *by_id[row.point_id];
    const auto expected = result_for(p);
    EXPECT_EQ(row.seed, p.seed);
    EXPECT_EQ(row.repeat, p.repeat);
    EXPECT_EQ(row.method, "bayes");
    // Every parameter comes back with its name, type and value; none is invented.
    EXPECT_EQ(row.parameters, row_of(p).parameters);
    EXPECT_EQ(row.parameter("alpha"), nullptr);
    ASSERT_NE(row.parameter("L"), nullptr);
    EXPECT_EQ(row.parameter("L")->type, grid::parameter_value::kind::integer);
    EXPECT_EQ(row.status, grid::status_name(expected.status));
    EXPECT_EQ(row.message, expected.message);
    EXPECT_EQ(row.extra_json, expected.extra_json);
    ASSERT_EQ(row.values.size(), grid::result_columns.size());
    for (std::size_t c = 0; c < grid::result_columns.size(); ++c) {
      EXPECT_EQ(row.value_names[c], archive_column_name(grid::result_columns[c]));
      const double want = expected.values[c];
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(row.values[c])) << row.value_names[c];
      else EXPECT_EQ(row.values[c], want) << row.value_names[c];
    }
  }
  EXPECT_GT(std::count_if(rows.begin(), rows.end(), [](const point_row& row) { return row.status == "failed"; }), 0);
  // Table order is deterministic: sorted by task, then nu, then repeat.
  EXPECT_EQ(rows.front().parameter("task")->text, "max");
  EXPECT_EQ(rows.front().parameter("nu")->real, 1.0);
  EXPECT_EQ(rows.back().parameter("task")->text, "spiked");
  EXPECT_EQ(rows.back().parameter("nu")->real, 5.0);
  const auto runs = r.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].exit_reason, "complete");
  EXPECT_EQ(runs[0].ranks, 2);
  EXPECT_EQ(runs[0].host, "testhost");
  EXPECT_EQ(runs[0].points_done, 20u);
  EXPECT_GE(runs[0].end_unix, runs[0].start_unix);
  const auto f = r.check_freshness();
  EXPECT_TRUE(f.journal_present);
  EXPECT_EQ(f.newer_points, 0u);
  EXPECT_EQ(f.writer_pid, 0);
}

TEST_F(ArchiveTest, ResumeKnowsWhatIsDoneAndWhatFailed) {
  const auto path = dir_ / "resume.h5";
  {
    auto w = writer::create(path, job_);
    w.begin_run({1, "", ""});
    for (std::size_t i = 0; i < 12; ++i) w.record(row_of(points_[i]));
    // no end_run: the process "dies" here (the destructor only refreshes the snapshot)
  }
  auto w = writer::open(path);
  EXPECT_EQ(w.job_text(), job_text);
  EXPECT_EQ(w.job_fingerprint(), job_.fingerprint);
  EXPECT_EQ(read_stored_job(path).name, "archive-test");
  EXPECT_EQ(w.done().size(), 12u);
  std::size_t to_run = 0, to_retry = 0;
  for (const auto& p : points_) {
    to_run += w.needs_run(p.id, false) ? 1 : 0;
    to_retry += w.needs_run(p.id, true) ? 1 : 0;
  }
  std::size_t failed = 0;
  for (std::size_t i = 0; i < 12; ++i) failed += result_for(points_[i]).status == grid::status::failed;
  EXPECT_EQ(to_run, 8u);
  EXPECT_EQ(to_retry, 8u + failed);
  // Not-converged points are run again only when asked for, independently of failed ones.
  {
    auto nc = writer::create(dir_ / "not_converged.h5", job_);
    nc.begin_run({1, "", ""});
    grid::result_record stalled;
    stalled.status = grid::status::not_converged;
    nc.record(row_of(points_[0], stalled));
    grid::result_record broken;
    broken.status = grid::status::failed;
    nc.record(row_of(points_[1], broken));
    EXPECT_FALSE(nc.needs_run(points_[0].id, false));
    EXPECT_FALSE(nc.needs_run(points_[0].id, true));
    EXPECT_TRUE(nc.needs_run(points_[0].id, false, true));
    EXPECT_FALSE(nc.needs_run(points_[1].id, false, true));
    EXPECT_TRUE(nc.needs_run(points_[1].id, true, true));
    nc.end_run("complete");
  }
  w.begin_run({3, "", "resume"});
  for (std::size_t i = 12; i < points_.size(); ++i) w.record(row_of(points_[i]));
  // A retried point replaces its earlier row.
  grid::result_record fixed;
  fixed.set("risk", 0.5);
  w.record(row_of(points_[0], fixed));
  w.end_run("complete");
  reader r(path);
  const auto rows = r.points();
  EXPECT_EQ(rows.size(), 20u);
  for (const auto& row : rows)
    if (row.point_id == points_[0].id) {
      EXPECT_EQ(row.status, "ok");
      EXPECT_EQ(row.run_index, 1u);
    }
  const auto runs = r.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].exit_reason, "interrupted");
  EXPECT_TRUE(std::isnan(runs[0].end_unix));
  EXPECT_EQ(runs[0].points_done, 12u);
  EXPECT_EQ(runs[1].points_done, 9u);
  EXPECT_EQ(r.attributes().journal_points, 21u);
}

TEST_F(ArchiveTest, RefusesToOverwriteADifferentJobAndLeavesItUntouched) {
  const auto path = dir_ / "keep.h5";
  {
    auto w = writer::create(path, job_);
    w.begin_run({1, "", ""});
    w.record(row_of(points_[0]));
    w.end_run("complete");
  }
  const auto journal = journal_path(path);
  const auto h5_size = fs::file_size(path), journal_size = fs::file_size(journal);
  const auto h5_time = fs::last_write_time(path), journal_time = fs::last_write_time(journal);
  const journal_job other{"name = \"other\"\nseed = 1\n[[method]]\nname = \"bayes\"\n", "0123456789abcdef", "other.toml",
                          "other"};
  EXPECT_THROW((void)writer::create(path, other, writer::if_exists::reuse_same_job), archive_exists_error);
  EXPECT_THROW((void)writer::create(path, job_, writer::if_exists::fail), archive_exists_error);
  EXPECT_EQ(fs::file_size(path), h5_size);
  EXPECT_EQ(fs::file_size(journal), journal_size);
  EXPECT_EQ(fs::last_write_time(path), h5_time);
  EXPECT_EQ(fs::last_write_time(journal), journal_time);
  auto same = writer::create(path, job_, writer::if_exists::reuse_same_job);
  EXPECT_EQ(same.done().size(), 1u);
  // A non-archive file is never overwritten either.
  const auto foreign = dir_ / "foreign.h5";
  std::ofstream(foreign) << "not hdf5";
  EXPECT_THROW((void)writer::create(foreign, job_), archive_exists_error);
  EXPECT_THROW((void)reader(foreign), archive_not_found_error);
}

TEST_F(ArchiveTest, OneWriterAtATimeAndReadersWhileWriting) {
  const auto path = dir_ / "lock.h5";
  auto w = writer::create(path, job_, writer::if_exists::fail, {1, 1e9, 0});
  EXPECT_THROW((void)writer::open(path), archive_locked_error);
  EXPECT_THROW((void)recover(path), archive_locked_error);
  EXPECT_NE(journal_lock_holder(journal_path(path)), 0);
  w.begin_run({1, "", ""});
  for (std::size_t i = 0; i < 5; ++i) {
    w.record(row_of(points_[i]));
    // rebuild_every_points = 1: the snapshot follows every record and is always readable.
    reader r(path);
    EXPECT_EQ(r.point_count(), i + 1);
    EXPECT_EQ(r.runs().back().exit_reason, "running");
  }
}

TEST_F(ArchiveTest, SnapshotLagIsReportedByFreshness) {
  const auto path = dir_ / "lag.h5";
  auto w = writer::create(path, job_, writer::if_exists::fail, {1000, 1e9, 0});
  w.begin_run({1, "", ""});
  for (std::size_t i = 0; i < 4; ++i) w.record(row_of(points_[i]));
  reader r(path);
  EXPECT_EQ(r.point_count(), 0u);
  const auto f = r.check_freshness();
  EXPECT_EQ(f.newer_points, 4u);
  EXPECT_NE(f.writer_pid, 0);
  w.rebuild_now();
  EXPECT_EQ(reader(path).point_count(), 4u);
}

TEST_F(ArchiveTest, LivePointsReadTheJournalBehindTheSnapshot) {
  const auto path = dir_ / "live.h5";
  auto w = writer::create(path, job_, writer::if_exists::fail, {1000, 1e9, 0});
  w.begin_run({1, "", ""});
  w.record(row_of(points_[0]));
  w.rebuild_now();
  for (std::size_t i = 1; i < 4; ++i) w.record(row_of(points_[i]));
  auto retried = row_of(points_[0]);
  const auto risk_name = archive_column_name("risk");
  const auto value_of = [](const point_row& row, const std::string& name) {
    const auto at = std::find(row.value_names.begin(), row.value_names.end(), name);
    return at == row.value_names.end() ? std::nan("") : row.values[static_cast<std::size_t>(at - row.value_names.begin())];
  };
  retried.values[static_cast<std::size_t>(std::find(retried.value_names.begin(), retried.value_names.end(), risk_name) -
                                          retried.value_names.begin())] = 0.125; // the latest record of a point wins
  w.record(retried);
  const reader r(path);
  ASSERT_EQ(r.points().size(), 1u);
  const auto live = r.live().points;
  ASSERT_EQ(live.size(), 4u);
  std::set<std::uint64_t> ids;
  for (const auto& row : live) ids.insert(row.point_id);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(ids.contains(points_[i].id)) << i;
  for (const auto& row : live) {
    ASSERT_FALSE(row.value_names.empty());
    if (row.point_id == points_[0].id) {
      EXPECT_EQ(value_of(row, risk_name), 0.125);
    }
  }
  const auto runs = r.live().runs;
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].exit_reason, "running");
  EXPECT_EQ(runs[0].points_done, 5u); // records, a retried point's two included
  // Once the snapshot has caught up, the live rows are the snapshot's rows.
  w.rebuild_now();
  const reader caught_up(path);
  const auto snapshot = caught_up.points();
  const auto again = caught_up.live().points;
  ASSERT_EQ(snapshot.size(), again.size());
  for (std::size_t i = 0; i < snapshot.size(); ++i) {
    EXPECT_EQ(snapshot[i].point_id, again[i].point_id);
    EXPECT_EQ(value_of(snapshot[i], risk_name), value_of(again[i], risk_name));
    EXPECT_EQ(snapshot[i].status, again[i].status);
  }
}

TEST_F(ArchiveTest, ExtendReplacesTheStoredJobDurably) {
  const auto path = dir_ / "extend.h5";
  auto bigger_text = job_text;
  bigger_text.replace(bigger_text.find("nu = [1, 2, 3, 4, 5]"), 20, "nu = [1, 2, 3, 4, 5, 6]");
  const journal_job bigger{bigger_text, "a1b2c3d4e5f60718", "bigger.toml", "archive-test"};
  {
    auto w = writer::create(path, job_);
    w.begin_run({1, "", ""});
    w.record(row_of(points_[0]));
    w.end_run("complete");
    w.extend_job(bigger);
    EXPECT_EQ(w.job_text(), bigger_text);
    EXPECT_EQ(w.job_fingerprint(), bigger.fingerprint);
    EXPECT_EQ(reader(path).attributes().job_fingerprint, bigger.fingerprint);
  }
  EXPECT_EQ(read_stored_job(path).fingerprint, bigger.fingerprint);
  auto w = writer::open(path);
  EXPECT_EQ(w.job_text(), bigger_text);
  EXPECT_EQ(w.done().size(), 1u);
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> frames_of(const std::string& bytes);
std::string file_bytes(const fs::path& path);

recover_options salvaging() {
  recover_options options;
  options.salvage = true;
  return options;
}
recover_options checked_by(row_check check) {
  recover_options options;
  options.check = std::move(check);
  return options;
}

TEST_F(ArchiveTest, TornJournalTailsAreDetectedAndIgnoredAtRandomOffsets) {
  const auto path = dir_ / "torn.h5";
  const auto journal = journal_path(path);
  std::vector<std::uint64_t> ends; // journal size after each acknowledged point
  {
    auto w = writer::create(path, job_);
    w.begin_run({1, "", ""});
    for (const auto& p : points_) {
      w.record(row_of(p));
      ends.push_back(fs::file_size(journal));
    }
  }
  std::string bytes;
  {
    std::ifstream in(journal, std::ios::binary);
    bytes.resize(fs::file_size(journal));
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  ASSERT_EQ(bytes.size(), ends.back());
  const auto frames = frames_of(bytes);
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<std::uint64_t> offset_of(ends.front() - 200, bytes.size());
  const auto copy = dir_ / "copy.h5";
  for (int trial = 0; trial < 25; ++trial) {
    const std::uint64_t cut = trial == 0 ? bytes.size() : offset_of(rng);
    // Also: random bytes after the cut. Inside a record whose header survived and that they do
    // not complete, they are still a torn write; otherwise (a complete frame that fails its
    // checksum, garbage after a record boundary) damage, which only salvage cuts.
    const bool garbage = trial % 3 == 2;
    std::string content = bytes.substr(0, cut);
    if (garbage) {
      for (int i = 0; i < 37; ++i) content.push_back(static_cast<char>(rng()));
    }
    fs::remove(copy);
    {
      std::ofstream out(journal_path(copy), std::ios::binary | std::ios::trunc);
      out << content;
    }
    const std::size_t expected = static_cast<std::size_t>(std::count_if(ends.begin(), ends.end(),
                                                                         [&](std::uint64_t e) { return e <= cut; }));
    const auto frame = std::find_if(frames.begin(), frames.end(), [&](const auto& f) { return f.second > cut; });
    const bool torn = !garbage || (frame != frames.end() && cut >= frame->first + 20 && content.size() < frame->second);
    if (!torn) {
      EXPECT_THROW((void)recover(copy), journal_damaged_error) << "cut at " << cut;
      const auto salvaged = recover(copy, salvaging());
      ASSERT_EQ(salvaged.damage.size(), 1u);
      EXPECT_TRUE(salvaged.damage[0].at_end);
      EXPECT_EQ(salvaged.damage[0].end, content.size());
      EXPECT_EQ(file_bytes(salvaged.damaged_copy), content);
      EXPECT_EQ(salvaged.points, expected) << "cut at " << cut;
      continue;
    }
    const auto report = recover(copy);
    EXPECT_EQ(report.points, expected) << "cut at " << cut;
    EXPECT_EQ(report.journal_bytes + report.ignored_bytes, content.size());
    reader r(copy);
    EXPECT_EQ(r.point_count(), expected) << "cut at " << cut;
    // The recovered journal is appendable: a resumed run adds after the intact prefix.
    auto w = writer::open(copy);
    EXPECT_EQ(w.done().size(), expected);
    w.begin_run({1, "", ""});
    w.record(row_of(points_.back()));
    w.end_run("complete");
    EXPECT_EQ(reader(copy).point_count(), expected + (expected == points_.size() ? 0 : 1));
  }
}

TEST_F(ArchiveTest, ASnapshotCopiedWithoutItsJournalCanBeResumed) {
  const auto path = dir_ / "copied.h5";
  {
    auto w = writer::create(path, job_);
    w.begin_run({2, "a", "first"});
    for (std::size_t i = 0; i < 6; ++i) w.record(row_of(points_[i]));
    w.end_run("signal SIGTERM");
    w.begin_run({3, "b", "second"});
    for (std::size_t i = 6; i < 9; ++i) w.record(row_of(points_[i]));
    w.rebuild_now();
  } // dies without end_run
  const auto before = reader(path).points();
  fs::remove(journal_path(path));
  auto w = writer::open(path);
  EXPECT_EQ(w.done().size(), 9u);
  EXPECT_EQ(w.job_text(), job_text);
  w.begin_run({1, "c", "third"});
  w.record(row_of(points_[9]));
  w.end_run("complete");
  reader r(path);
  const auto runs = r.runs();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].exit_reason, "signal SIGTERM");
  EXPECT_EQ(runs[0].points_done, 6u);
  EXPECT_EQ(runs[1].exit_reason, "interrupted");
  EXPECT_EQ(runs[1].points_done, 3u);
  EXPECT_EQ(runs[2].points_done, 1u);
  const auto after = r.points();
  ASSERT_EQ(after.size(), 10u);
  std::map<std::uint64_t, const point_row*> by_id;
  for (const auto& row : after) by_id[row.point_id] = &row;
  for (const auto& row : before) {
    ASSERT_TRUE(by_id.contains(row.point_id));
    EXPECT_EQ(by_id[row.point_id]->values.size(), row.values.size());
    EXPECT_EQ(by_id[row.point_id]->message, row.message);
    EXPECT_EQ(by_id[row.point_id]->run_index, row.run_index);
    EXPECT_EQ(by_id[row.point_id]->completed_unix, row.completed_unix);
  }
}

TEST(Crc32c, StandardCheckValues) {
  // The check value of CRC-32C (iSCSI, RFC 3720 appendix B.4) and of 32 zero bytes.
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  // Incremental use gives the same value as one pass (any split, including the 8-byte steps).
  const std::string text = "single-location regression journal record";
  for (std::size_t cut = 0; cut <= text.size(); ++cut)
    EXPECT_EQ(crc32c(std::string_view(text).substr(cut), crc32c(std::string_view(text).substr(0, cut))), crc32c(text));
}

// Record boundaries of a v2 journal, parsed independently of the reader: [begin, end) per frame.
std::vector<std::pair<std::uint64_t, std::uint64_t>> frames_of(const std::string& bytes) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> frames;
  std::uint64_t position = 0;
  while (position + 20 <= bytes.size()) {
    EXPECT_EQ(bytes.substr(position, 4), "SLR2");
    std::uint32_t length = 0;
    std::memcpy(&length, bytes.data() + position + 8, 4);
    frames.emplace_back(position, position + 20 + length);
    position += 20 + length;
  }
  EXPECT_EQ(position, bytes.size());
  return frames;
}

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes(fs::file_size(path), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}
void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST_F(ArchiveTest, AFlippedBitCostsOneRecordAndSalvageKeepsEveryIntactRecord) {
  const auto path = dir_ / "flip.h5";
  write_complete(path);
  const auto reference_rows = reader(path).points();
  const std::string bytes = file_bytes(journal_path(path));
  const auto frames = frames_of(bytes);
  const auto clean = read_journal(journal_path(path));
  ASSERT_FALSE(clean.damaged());
  ASSERT_EQ(clean.entries.size() + 1, frames.size()); // + the header record
  // Frames: header, job, run_begin, 20 self-describing points, run_end. Flip bits after the job record,
  // before the last record (a flip there is a torn tail, tested separately below).
  std::mt19937_64 rng(2024);
  std::uniform_int_distribution<std::uint64_t> byte_of(frames[2].first, frames[frames.size() - 2].second - 1);
  const auto copy = dir_ / "copy.h5";
  for (int trial = 0; trial < 30; ++trial) {
    const auto at = byte_of(rng);
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ (1 << (rng() % 8)));
    std::size_t hit = 0;
    while (!(frames[hit].first <= at && at < frames[hit].second)) ++hit;
    const bool point_hit = hit >= 3 && hit < frames.size() - 1;
    fs::remove(copy);
    write_bytes(journal_path(copy), damaged); // the journal alone: no .h5 to merge from
    const auto contents = read_journal(journal_path(copy));
    ASSERT_EQ(contents.damage.size(), 1u) << "flip at " << at;
    EXPECT_EQ(contents.damage[0].begin, frames[hit].first);
    EXPECT_EQ(contents.damage[0].end, frames[hit].second);
    const std::size_t expected_entries = clean.entries.size() - 1; // every record but the damaged one
    EXPECT_EQ(contents.entries.size(), expected_entries) << "flip at " << at;
    // Writers refuse and change nothing.
    EXPECT_THROW((void)writer::open(copy), journal_damaged_error);
    EXPECT_THROW((void)recover(copy), journal_damaged_error);
    EXPECT_EQ(file_bytes(journal_path(copy)), damaged);
    EXPECT_FALSE(fs::exists(copy));
    // Salvage keeps every intact record and the damaged file byte for byte.
    const auto report = recover(copy, salvaging());
    EXPECT_EQ(report.intact_records, expected_entries);
    EXPECT_EQ(report.points, points_.size() - (point_hit ? 1 : 0)) << "flip at " << at;
    EXPECT_EQ(file_bytes(report.damaged_copy), damaged);
    EXPECT_FALSE(read_journal(journal_path(copy)).damaged());
    if (point_hit) {
      EXPECT_LE(report.lost_point_ids.size(), 1u);
    }
    // A resume computes what was lost; the archive then equals the undamaged one.
    auto w = writer::open(copy);
    w.begin_run({1, "", ""});
    for (const auto& p : points_)
      if (w.needs_run(p.id, false)) w.record(row_of(p));
    w.end_run("complete");
    auto rows = reader(copy).points();
    ASSERT_EQ(rows.size(), reference_rows.size());
    std::map<std::uint64_t, const point_row*> by_id;
    for (const auto& r : rows) by_id[r.point_id] = &r;
    for (const auto& r : reference_rows) {
      ASSERT_TRUE(by_id.contains(r.point_id));
      EXPECT_EQ(by_id[r.point_id]->seed, r.seed);
      EXPECT_EQ(by_id[r.point_id]->status, r.status);
      for (std::size_t c = 0; c < r.values.size(); ++c)
        if (!std::isnan(r.values[c])) {
          EXPECT_EQ(by_id[r.point_id]->values[c], r.values[c]);
        }
    }
  }
}

TEST_F(ArchiveTest, ADamagedJobRecordIsTakenFromTheSnapshot) {
  const auto path = dir_ / "job.h5";
  write_complete(path);
  std::string bytes = file_bytes(journal_path(path));
  const auto frames = frames_of(bytes);
  bytes[(frames[1].first + frames[1].second) / 2] ^= 0x04; // inside the job text
  write_bytes(journal_path(path), bytes);
  EXPECT_THROW((void)writer::open(path), journal_damaged_error);
  const auto report = recover(path, salvaging());
  EXPECT_TRUE(report.job_from_snapshot);
  EXPECT_EQ(report.points, points_.size());
  auto w = writer::open(path);
  EXPECT_EQ(w.job_text(), job_text);
  EXPECT_EQ(w.done().size(), points_.size());
}

TEST_F(ArchiveTest, RowsOfTheSnapshotMissingFromATruncatedJournalAreMergedBack) {
  const auto path = dir_ / "merge.h5";
  write_complete(path);
  const std::string bytes = file_bytes(journal_path(path));
  const auto frames = frames_of(bytes);
  // Cut after the 8th point record: 12 points and the run_end are gone from the journal only.
  write_bytes(journal_path(path), bytes.substr(0, frames[3 + 8].first));
  {
    const auto f = reader(path).check_freshness();
    EXPECT_EQ(f.missing_points, points_.size() - 8);
    EXPECT_EQ(f.newer_points, 0u);
  }
  auto w = writer::open(path);
  EXPECT_EQ(w.done().size(), points_.size());
  w.begin_run({1, "", ""});
  w.end_run("complete");
  EXPECT_EQ(reader(path).point_count(), points_.size());
  // job, run_begin, every point (8 kept + 12 merged back), run 0's end (merged back), the new run.
  EXPECT_EQ(read_journal(journal_path(path)).entries.size(), 1u + 1u + points_.size() + 1u + 2u);
}

TEST_F(ArchiveTest, OpeningAnUpToDateArchiveLeavesItsFilesByteIdentical) {
  const auto path = dir_ / "same.h5";
  write_complete(path, 5);
  const auto h5 = file_bytes(path);
  const auto journal = file_bytes(journal_path(path));
  {
    auto w = writer::open(path);
    EXPECT_EQ(read_stored_job(path).text, job_text);
  }
  EXPECT_EQ(file_bytes(path), h5);
  EXPECT_EQ(file_bytes(journal_path(path)), journal);
}

TEST_F(ArchiveTest, MissingOrForeignJournalIsATypedError) {
  EXPECT_THROW((void)writer::open(dir_ / "none.h5"), archive_not_found_error);
  EXPECT_THROW((void)recover(dir_ / "none.h5"), archive_not_found_error);
  // A foreign or empty file where the journal should be is bad input (exit 2), like a foreign .h5.
  std::ofstream(journal_path(dir_ / "foreign.h5"), std::ios::binary) << "this is not a journal at all, no";
  EXPECT_THROW((void)recover(dir_ / "foreign.h5"), archive_not_found_error);
  std::ofstream(journal_path(dir_ / "empty.h5"), std::ios::binary).flush();
  EXPECT_THROW((void)writer::open(dir_ / "empty.h5"), archive_not_found_error);
}


TEST_F(ArchiveTest, DamageAtTheEndIsReportedNotCutAsATornWrite) {
  const auto path = dir_ / "end.h5";
  write_complete(path);
  const std::string bytes = file_bytes(journal_path(path));
  const auto frames = frames_of(bytes);
  const auto last_point = frames[frames.size() - 2]; // the run_end record follows it
  std::uint64_t last_id = 0;
  std::memcpy(&last_id, bytes.data() + last_point.first + 20, 8);
  // A flipped bit in the payload of the last two records: complete frames that fail their checksum.
  std::string damaged = bytes;
  damaged[last_point.first + 40] ^= 0x10;
  damaged[frames.back().first + 24] ^= 0x01;
  const auto copy = dir_ / "copy.h5";
  write_bytes(journal_path(copy), damaged);
  const auto contents = read_journal(journal_path(copy));
  EXPECT_EQ(contents.ignored_bytes, 0u);
  ASSERT_EQ(contents.damage.size(), 1u);
  EXPECT_TRUE(contents.damage[0].at_end);
  EXPECT_EQ(contents.damage[0].begin, last_point.first);
  EXPECT_EQ(contents.damage[0].records, 2u);
  EXPECT_EQ(contents.damage[0].point_ids, std::vector<std::uint64_t>{last_id});
  EXPECT_THROW((void)writer::open(copy), journal_damaged_error);
  EXPECT_EQ(file_bytes(journal_path(copy)), damaged);
  // Without the .h5 the point is lost, and said so by id.
  auto report = recover(copy, salvaging());
  EXPECT_EQ(report.points, points_.size() - 1);
  EXPECT_EQ(report.damaged_point_records, 1u);
  EXPECT_EQ(report.lost_point_ids, std::vector<std::uint64_t>{last_id});
  // With the .h5 it comes back from there.
  fs::remove(copy);
  fs::remove(journal_path(copy));
  fs::copy_file(path, copy);
  write_bytes(journal_path(copy), damaged);
  report = recover(copy, salvaging());
  EXPECT_EQ(report.points, points_.size());
  EXPECT_EQ(report.merged_points, 1u);
  EXPECT_TRUE(report.lost_point_ids.empty());
  // Zeros over the last 4 KiB: no header survives there; reported by bytes, not cut silently.
  std::string zeroed = bytes;
  std::fill(zeroed.end() - 4096, zeroed.end(), '\0');
  write_bytes(journal_path(copy), zeroed);
  const auto z = read_journal(journal_path(copy));
  ASSERT_EQ(z.damage.size(), 1u);
  EXPECT_TRUE(z.damage[0].at_end);
  EXPECT_EQ(z.damage[0].end, zeroed.size());
  EXPECT_EQ(z.ignored_bytes, 0u);
  // Bytes no surviving header accounts for are counted (their records cannot be).
  EXPECT_GT(z.damage[0].unaccounted_bytes, 0u);
  EXPECT_LE(z.damage[0].unaccounted_bytes, 4096u);
  // A record cut short is a torn write: cut without a word.
  write_bytes(journal_path(copy), bytes.substr(0, frames.back().first + 25));
  const auto torn = read_journal(journal_path(copy));
  EXPECT_FALSE(torn.damaged());
  EXPECT_EQ(torn.ignored_bytes, 25u);
}

TEST_F(ArchiveTest, ADamagedPointRecordNamesItsPointId) {
  const auto path = dir_ / "named.h5";
  write_complete(path);
  std::string bytes = file_bytes(journal_path(path));
  const auto frames = frames_of(bytes);
  const auto record = frames[3 + 5];
  std::uint64_t id = 0;
  std::memcpy(&id, bytes.data() + record.first + 20, 8);
  bytes[record.second - 3] ^= 0x20;
  write_bytes(journal_path(path), bytes);
  fs::remove(path);
  const auto contents = read_journal(journal_path(path));
  ASSERT_EQ(contents.damage.size(), 1u);
  EXPECT_FALSE(contents.damage[0].at_end);
  EXPECT_EQ(contents.damage[0].point_ids, std::vector<std::uint64_t>{id});
  EXPECT_NE(describe_damage(contents).find("point"), std::string::npos);
  const auto report = recover(path, salvaging());
  EXPECT_EQ(report.lost_point_ids, std::vector<std::uint64_t>{id});
}

TEST_F(ArchiveTest, AResultNamedLikeAParameterRoundTripsThroughTheSnapshot) {
  // ERM's D: the dimension simulated (a result) beside the D asked for (a parameter); and a
  // result already named like the stored column, to show the mapping is one-to-one.
  const auto path = dir_ / "d.h5";
  auto row = row_of(points_[0]);
  row.parameters.push_back(grid::parameter_value::of_integer("D", 400));
  row.value_names.push_back("D");
  row.values.push_back(401);
  row.value_names.push_back("D_result");
  row.values.push_back(402);
  {
    auto w = writer::create(path, job_);
    w.begin_run({1, "", ""});
    w.record(row);
    w.end_run("complete");
  }
  const auto check_rows = [&] {
    const auto rows = reader(path).points();
    ASSERT_EQ(rows.size(), 1u);
    const auto value = [&](const std::string& name) {
      const auto it = std::find(rows[0].value_names.begin(), rows[0].value_names.end(), name);
      return it == rows[0].value_names.end() ? -1.0 : rows[0].values[static_cast<std::size_t>(it - rows[0].value_names.begin())];
    };
    EXPECT_EQ(value("D"), 401);
    EXPECT_EQ(value("D_result"), 402);
    ASSERT_NE(rows[0].parameter("D"), nullptr);
    EXPECT_EQ(rows[0].parameter("D")->integer, 400);
  };
  check_rows();
  // The .h5 alone (copied without its journal) resumes, twice, and keeps every name.
  for (int round = 0; round < 2; ++round) {
    fs::remove(journal_path(path));
    {
      auto w = writer::open(path);
      EXPECT_EQ(w.done().size(), 1u);
      w.begin_run({1, "", ""});
      w.end_run("complete");
    }
    check_rows();
    const auto journal = read_journal(journal_path(path));
    const auto* journaled = std::get_if<point_row>(&journal.entries[2]);
    ASSERT_NE(journaled, nullptr);
    EXPECT_NE(std::find(journaled->value_names.begin(), journaled->value_names.end(), "D"), journaled->value_names.end());
  }
}

TEST_F(ArchiveTest, RowsOfTheSnapshotThatTheCheckRefusesAreReportedAndNeverJournaled) {
  const auto path = dir_ / "checked.h5";
  write_complete(path);
  std::map<std::uint64_t, bool> known;
  for (const auto& p : points_) known[p.id] = true;
  const row_check check = [&](const std::string& text, point_row& row) -> std::string {
    EXPECT_EQ(text, job_text);
    return known.contains(row.point_id) ? "" : "not a point of the job";
  };
  // Forget two points of the job, as a bit flipped in their stored ids would.
  known.erase(points_[3].id);
  known.erase(points_[4].id);
  fs::remove(journal_path(path));
  {
    auto w = writer::open(path, {}, check);
    EXPECT_EQ(w.done().size(), points_.size() - 2);
    ASSERT_EQ(w.opened().refused.size(), 2u);
    EXPECT_TRUE(w.opened().journal_from_snapshot);
  }
  for (const auto& e : read_journal(journal_path(path)).entries)
    if (const auto* row = std::get_if<point_row>(&e)) {
      EXPECT_NE(row->point_id, points_[3].id);
      EXPECT_NE(row->point_id, points_[4].id);
    }
  EXPECT_EQ(reader(path).point_count(), points_.size() - 2);
  // A .h5 row that the truncated journal lost is merged back only if the check accepts it.
  write_complete(dir_ / "second.h5");
  const auto second = dir_ / "second.h5";
  const std::string bytes = file_bytes(journal_path(second));
  const auto frames = frames_of(bytes);
  write_bytes(journal_path(second), bytes.substr(0, frames[3 + 2].first)); // keeps 2 points
  const auto report = recover(second, checked_by(check));
  EXPECT_EQ(report.merged_points, points_.size() - 2 - 2);
  EXPECT_EQ(report.refused.size(), 2u);
  EXPECT_EQ(report.points, points_.size() - 2);
}


// A .h5 whose damage crashes libhdf5 itself: one bit flipped in the global heap behind a
// variable-length attribute of a 24-point ERM archive (tests/archive/data/h5-bit-flip: the
// journal beside it is intact). Opening it used to end the process with SIGSEGV inside H5HG_read.
TEST_F(ArchiveTest, ASnapshotThatCrashesHdf5IsRefusedAndRebuiltFromItsJournal) {
  const fs::path data = SLR_ARCHIVE_TEST_DATA;
  const auto path = dir_ / "results.h5";
  fs::copy_file(data / "h5-bit-flip" / "results.h5", path);
  fs::copy_file(data / "h5-bit-flip" / "results.h5.journal", journal_path(path));
  const auto journal_before = file_bytes(journal_path(path));
  // The flipped bit points an attribute at a heap object that does not exist: HDF5 then follows
  // whatever memory lies there (address-space layout is randomised), which usually ends in SIGSEGV
  // and sometimes in a garbage text. This process never dies of it: the crash is reported.
  try {
    (void)reader(path);
  } catch (const archive_not_found_error& e) {
    EXPECT_NE(std::string(e.what()).find("crashed HDF5 (SIGSEGV)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("slr-sweep recover"), std::string::npos) << e.what();
  }
  {
    auto w = writer::open(path); // what `resume` does: the journal is the truth, the .h5 is rebuilt
    EXPECT_EQ(w.done().size(), 24u);
  }
  EXPECT_EQ(file_bytes(journal_path(path)), journal_before);
  const reader rebuilt(path);
  EXPECT_TRUE(rebuilt.attributes().checksummed);
  EXPECT_EQ(rebuilt.points().size(), 24u);
  // recover rebuilds it too.
  fs::copy_file(data / "h5-bit-flip" / "results.h5", path, fs::copy_options::overwrite_existing);
  EXPECT_EQ(recover(path).points, 24u);
  EXPECT_EQ(reader(path).points().size(), 24u);
}

// The isolated read itself: a crash, an allocation past the budget and a read that does not end
// are reported by the parent, which goes on.
TEST(IsolatedRead, ACrashAnOversizedAllocationAndAHangAreReported) {
  EXPECT_EQ(run_isolated([] {}, std::size_t{1} << 30, 10).result, isolated_outcome::kind::ok);
  const auto crash = run_isolated([] { std::raise(SIGSEGV); }, std::size_t{1} << 30, 10);
  EXPECT_EQ(crash.result, isolated_outcome::kind::crashed);
  EXPECT_NE(crash.message.find("SIGSEGV"), std::string::npos) << crash.message;
  const auto huge = run_isolated(
      [] {
        std::vector<char> bytes(std::size_t{8} << 30); // 8 GiB against a budget of 256 MiB
        bytes[bytes.size() - 1] = 1;
      },
      std::size_t{256} << 20, 10);
  EXPECT_EQ(huge.result, isolated_outcome::kind::crashed);
  EXPECT_NE(huge.message.find("more than 256 MiB"), std::string::npos) << huge.message;
  const auto hang = run_isolated([] { ::sleep(30); }, std::size_t{1} << 30, 0.5);
  EXPECT_EQ(hang.result, isolated_outcome::kind::crashed);
  EXPECT_NE(hang.message.find("did not end"), std::string::npos) << hang.message;
  const auto refused = run_isolated([] { throw archive_not_found_error("not an archive"); }, std::size_t{1} << 30, 10);
  EXPECT_EQ(refused.result, isolated_outcome::kind::refused);
  EXPECT_EQ(refused.message, "not an archive");
}

// Replaces the first occurrence of `from` in a file by `to` (same length): an edit of stored
// bytes that no HDF5 checksum sees (texts in the global heap, attributes in object headers).
void edit_bytes(const fs::path& path, const std::string& from, const std::string& to) {
  auto bytes = file_bytes(path);
  const auto at = bytes.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  ASSERT_EQ(from.size(), to.size());
  bytes.replace(at, from.size(), to);
  write_bytes(path, bytes);
}

TEST_F(ArchiveTest, AnEditedTextOfARowIsRefusedNotJournaled) {
  const auto path = dir_ / "texts.h5";
  write_complete(path);
  fs::remove(journal_path(path)); // the .h5 alone: nothing else holds the rows
  // A row whose extra_json text ({"id":NN}) no other row has; one digit of it changes.
  const auto json_of = [](const test_point& p) { return "{\"id\":" + std::to_string(p.id % 100) + "}"; };
  const auto unique = std::find_if(points_.begin(), points_.end(), [&](const test_point& p) {
    return std::count_if(points_.begin(), points_.end(), [&](const test_point& q) { return json_of(q) == json_of(p); }) == 1;
  });
  ASSERT_NE(unique, points_.end());
  const auto& victim = *unique;
  const std::string json = json_of(victim);
  std::string edited = json;
  edited[edited.size() - 2] = static_cast<char>('0' + (edited[edited.size() - 2] - '0' + 1) % 10);
  edit_bytes(path, json, edited);
  std::vector<refused_row> refused;
  const auto rows = reader(path).points(&refused);
  EXPECT_EQ(rows.size(), points_.size() - 1);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].point_id, victim.id);
  EXPECT_NE(refused[0].reason.find("checksum"), std::string::npos) << refused[0].reason;
  // Opening it for a resume journals every other row and names the refused one; the edited row
  // is neither in the journal nor done (a resume recomputes it).
  auto w = writer::open(path);
  EXPECT_EQ(w.done().size(), points_.size() - 1);
  EXPECT_FALSE(w.done().contains(victim.id));
  ASSERT_EQ(w.opened().refused.size(), 1u);
  EXPECT_EQ(w.opened().refused[0].point_id, victim.id);
  for (const auto& e : read_journal(journal_path(path)).entries)
    if (const auto* row = std::get_if<point_row>(&e)) {
      EXPECT_NE(row->point_id, victim.id);
    }
}

TEST_F(ArchiveTest, AnEditedAttributeMakesTheSnapshotDamaged) {
  const auto path = dir_ / "attributes.h5";
  write_complete(path);
  edit_bytes(path, "samples = 1000", "samples = 1001"); // inside the job_text attribute
  try {
    (void)reader(path);
    FAIL() << "an edited job text was accepted";
  } catch (const archive_not_found_error& e) {
    EXPECT_NE(std::string(e.what()).find("attributes fail their CRC-32C checksum"), std::string::npos) << e.what();
  }
  // The journal beside it is the truth: a resume rebuilds the .h5 with the job as journaled.
  auto w = writer::open(path);
  EXPECT_EQ(w.done().size(), points_.size());
  EXPECT_EQ(reader(path).attributes().job_text, job_text);
}

} // namespace
} // namespace slr::archive
