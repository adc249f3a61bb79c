#include "slr/archive/recover.hpp"

#include <chrono>

#include "archive_model.hpp"
#include "slr/archive/archive_error.hpp"
#include "slr/archive/journal.hpp"
#include "snapshot.hpp"

namespace slr::archive {

recover_report recover(const std::filesystem::path& archive_path) {
  const auto start = std::chrono::steady_clock::now();
  const auto journal_file = journal_path(archive_path);
  if (!std::filesystem::exists(journal_file))
    throw archive_not_found_error("no journal at " + journal_file.string() + ": nothing to recover from");
  journal_contents contents;
  // Holding the writer's lock while rebuilding: refuses to run beside a live sweep.
  auto journal = journal_writer::open(journal_file, contents);
  archive_model model;
  recover_report report;
  report.journal_bytes = contents.valid_bytes;
  report.ignored_bytes = contents.ignored_bytes;
  for (auto& e : contents.entries) model.apply(std::move(e));
  if (!model.has_job()) throw journal_error(journal_file.string() + " holds no job record");
  write_snapshot(archive_path, model.snapshot(contents.valid_bytes));
  report.points = model.rows().size();
  report.point_records = model.point_records();
  report.runs = model.runs().size();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

} // namespace slr::archive
