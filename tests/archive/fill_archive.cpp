// Test tool: runs a job's points in one process (no MPI) through the method registry and
// archives them, optionally only the first N points — a stand-in for `slr-sweep run` in the
// archive's own tests (Python readability, status, SIGKILL safety). After each point is
// acknowledged (record() returned: fsync'd in the journal) it prints "ack <point_id>".
//   fill_archive job.toml out.h5 [max_points [rebuild_every_points]]
#include <cstdlib>
#include <iostream>
#include <string>

#include "slr/archive/writer.hpp"
#include "slr/job/expansion.hpp"
#include "slr/methods/registry.hpp"
#include "slr/sweep/archive_job.hpp"
#include "slr/sweep/point_row.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: fill_archive job.toml out.h5 [max_points [rebuild_every_points]]\n";
    return 2;
  }
  try {
    const auto job = slr::job::load_job_file(argv[1]);
    const auto units = slr::job::expand(job);
    std::size_t limit = static_cast<std::size_t>(-1);
    if (argc > 3 && std::stol(argv[3]) >= 0) limit = std::stoul(argv[3]);
    slr::archive::writer_options options;
    if (argc > 4) {
      options.rebuild_every_points = std::stoul(argv[4]);
      options.max_rebuild_fraction = 0; // rebuild exactly as often as asked (crash tests)
    }
    auto archive = slr::sweep::create_archive(argv[2], job, slr::archive::writer::if_exists::reuse_same_job, options);
    archive.begin_run({1, "", "fill_archive"});
    std::size_t done = 0;
    for (const auto& unit : units) {
      const slr::grid::result_record* previous = nullptr;
      slr::grid::result_record last;
      for (const auto& p : unit.points) {
        if (done == limit) break;
        if (!archive.needs_run(p.id, false)) continue;
        slr::methods::run_context context;
        context.warm_start = previous;
        last = slr::methods::solve_point(p.point, context);
        archive.record(slr::sweep::make_point_row(p, last));
        std::cout << "ack " << p.id << std::endl;
        previous = &last;
        ++done;
      }
    }
    archive.end_run(done == limit ? "stopped" : "complete");
  } catch (const std::exception& e) {
    std::cerr << "fill_archive: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
