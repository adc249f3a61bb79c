// Archive throughput: journaled points per second (one fsync per point, and group commit), and
// the time to rebuild/recover the HDF5 snapshot of 10^4 points. Not a test: run by hand,
//   build/tests/bench/archive_bench --benchmark_min_time=1
// Files go to $TMPDIR (fsync cost depends on that file system).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "slr/archive/recover.hpp"
#include "slr/archive/writer.hpp"
#include "slr/job/expansion.hpp"
#include "slr/sweep/archive_job.hpp"
#include "slr/sweep/point_row.hpp"

namespace {
namespace fs = std::filesystem;

const std::string job_text = R"(
name = "bench"
seed = 1
[grid]
task = ["spiked", "max"]
nu = {linspace = [0.1, 10, 100]}
delta = {linspace = [0, 1, 50]}
[[method]]
name = "bayes"
)"; // 10^4 points

struct fixture {
  fs::path dir = fs::temp_directory_path() / ("slr-archive-bench-" + std::to_string(::getpid()));
  slr::job::job_spec job = slr::job::parse_job(job_text, "bench");
  std::vector<slr::job::sweep_unit> units = slr::job::expand(job);
  slr::grid::result_record record;
  fixture() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (std::size_t i = 0; i < record.values.size(); ++i) record.values[i] = 0.1 * static_cast<double>(i);
  }
  ~fixture() { fs::remove_all(dir); }
};

// Each point acknowledged on its own: write + fdatasync per point.
void record_each(benchmark::State& state) {
  fixture f;
  auto w = slr::sweep::create_archive(f.dir / "each.h5", f.job, slr::archive::writer::if_exists::fail,
                                        {1u << 30, 1e9, 0});
  w.begin_run({1, "", "bench"});
  std::size_t i = 0;
  for (auto _ : state) w.record(slr::sweep::make_point_row(f.units[i++ % f.units.size()].points[0], f.record));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(record_each)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Group commit: a batch of state.range(0) points per fdatasync (what a coordinator does with the
// results that arrived since the last write).
void record_batch(benchmark::State& state) {
  fixture f;
  auto w = slr::sweep::create_archive(f.dir / "batch.h5", f.job, slr::archive::writer::if_exists::fail,
                                        {1u << 30, 1e9, 0});
  w.begin_run({1, "", "bench"});
  const auto batch_size = static_cast<std::size_t>(state.range(0));
  std::vector<slr::archive::point_row> batch(batch_size);
  std::size_t i = 0;
  for (auto _ : state) {
    for (auto& b : batch) b = slr::sweep::make_point_row(f.units[i++ % f.units.size()].points[0], f.record);
    w.record_batch(batch);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch_size));
}
BENCHMARK(record_batch)->Arg(16)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();

// Rebuild of the .h5 snapshot (temporary file + rename + fsyncs) holding 10^4 points.
void rebuild_10k(benchmark::State& state) {
  fixture f;
  auto w = slr::sweep::create_archive(f.dir / "rebuild.h5", f.job, slr::archive::writer::if_exists::fail,
                                        {1u << 30, 1e9, 0});
  w.begin_run({1, "", "bench"});
  std::vector<slr::archive::point_row> batch;
  for (const auto& u : f.units) batch.push_back(slr::sweep::make_point_row(u.points[0], f.record));
  w.record_batch(batch);
  for (auto _ : state) w.rebuild_now();
  state.counters["points"] = static_cast<double>(batch.size());
  state.counters["h5_MB"] = static_cast<double>(fs::file_size(f.dir / "rebuild.h5")) / 1e6;
  state.counters["journal_MB"] = static_cast<double>(fs::file_size(f.dir / "rebuild.h5.journal")) / 1e6;
}
BENCHMARK(rebuild_10k)->Unit(benchmark::kMillisecond)->UseRealTime();

// recover: replay the 10^4-point journal and write the snapshot.
void recover_10k(benchmark::State& state) {
  fixture f;
  {
    auto w = slr::sweep::create_archive(f.dir / "recover.h5", f.job, slr::archive::writer::if_exists::fail,
                                          {1u << 30, 1e9, 0});
    w.begin_run({1, "", "bench"});
    std::vector<slr::archive::point_row> batch;
    for (const auto& u : f.units) batch.push_back(slr::sweep::make_point_row(u.points[0], f.record));
    w.record_batch(batch);
    w.end_run("complete");
  }
  for (auto _ : state) benchmark::DoNotOptimize(slr::archive::recover(f.dir / "recover.h5"));
}
BENCHMARK(recover_10k)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
