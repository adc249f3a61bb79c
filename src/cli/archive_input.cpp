#include "slr/cli/archive_input.hpp"

#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "slr/archive/reader.hpp"
#include "slr/query/filter.hpp"

namespace slr::cli {

void archive_input::add_to(CLI::App& command, bool several) {
  if (several)
    command
        .add_option_function<std::vector<std::string>>(
            "archives",
            [this](const std::vector<std::string>& given) {
              paths = given;
              path = given.front();
            },
            "Archives (results.h5) written by `slr-sweep run`; rows of several are tagged by a column `archive`")
        ->required();
  else
    command.add_option("archive", path, "The archive (results.h5) written by `slr-sweep run`")->required();
  command.add_option("--where", where,
                     "Row filter: conditions joined by commas, e.g. \"activation=softmax,nu=1,alpha>=2\"; operators "
                     "= != < <= > >=, numbers (inf, nan) or text, alternatives with | (activation=softmax|linear)");
  command.add_option_function<std::string>(
      "--status", [this](const std::string& text) { statuses = list_argument(text); },
      "Keep rows with these statuses, e.g. ok,unbounded");
}

namespace {
query::table load_one(const std::string& path) {
  std::optional<archive::reader> reader;
  try {
    reader.emplace(path);
  } catch (const archive::archive_not_found_error& e) {
    // A missing or damaged .h5 beside a readable journal: the journal holds every point.
    try {
      auto view = archive::read_journal_view(path);
      std::cerr << "slr-sweep: note: " << e.what() << "; read " << view.points.size()
                << " point(s) from its journal instead\n";
      return query::from_rows(std::move(view.points));
    } catch (const archive::archive_error&) {
    }
    throw std::invalid_argument(std::filesystem::exists(path) ? path + ": " + e.what() : path + ": no such archive");
  } catch (const archive::archive_error& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
  std::vector<archive::refused_row> damaged;
  // A running (or killed) sweep's .h5 is a snapshot behind its journal: read the journal's newer
  // records too, so that what a query shows is what the sweep has computed.
  std::uint64_t newer = 0;
  long writer = 0;
  try {
    const auto fresh = reader->check_freshness();
    newer = fresh.newer_points;
    writer = fresh.writer_pid;
  } catch (const archive::archive_error&) {
    // Freshness is advisory: an unreadable journal must not stop a read-only query.
  }
  auto points = query::from_rows(newer > 0 ? reader->live().points : reader->points(&damaged));
  if (!damaged.empty()) {
    std::cerr << "slr-sweep: note: " << path << ": " << damaged.size()
              << " row(s) whose texts fail their checksum are left out (point";
    for (const auto& d : damaged) std::cerr << " " << archive::point_id_text(d.point_id);
    std::cerr << "); `slr-sweep recover " << path << "` takes them from the journal\n";
  }
  if (newer > 0)
    std::cerr << "slr-sweep: note: " << path << ": " << newer << " point record(s) newer than the .h5 snapshot read from "
              << "its journal" << (writer != 0 ? " (a sweep is running)" : " (`slr-sweep recover` writes them into the .h5)")
              << "\n";
  return points;
}
} // namespace

query::table archive_input::load_filtered() const {
  query::table all;
  if (paths.size() <= 1) {
    all = load_one(path);
  } else {
    std::vector<std::pair<std::string, query::table>> parts;
    for (const auto& p : paths) parts.emplace_back(p, load_one(p));
    all = query::concatenate(parts, "archive");
  }
  auto kept = query::filter_status(query::filter(all, where), statuses);
  // An empty answer is a valid one, but a typo ("activation=softmx") should not look like it.
  if (kept.rows() == 0)
    if (const auto why = query::explain_no_match(all, where, statuses); !why.empty())
      std::cerr << "slr-sweep: note: " << why << "\n";
  return kept;
}

std::vector<std::string> list_argument(const std::string& text) { return query::split_list(text); }

} // namespace slr::cli
