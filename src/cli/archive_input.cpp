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
  if (!std::filesystem::exists(path)) throw std::invalid_argument(path + ": no such archive");
  std::optional<archive::reader> reader;
  try {
    reader.emplace(path);
  } catch (const archive::archive_error& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
  auto points = query::from_rows(reader->points());
  try {
    const auto fresh = reader->check_freshness();
    if (fresh.newer_points > 0)
      std::cerr << "slr-sweep: note: " << path << " is a snapshot " << static_cast<long>(fresh.snapshot_age_s)
                << " s old; " << fresh.newer_points << " newer point(s) are in the journal"
                << (fresh.writer_pid != 0 ? " (a sweep is running)" : " (run `slr-sweep recover` to include them)")
                << "\n";
  } catch (const archive::archive_error&) {
    // Freshness is advisory: an unreadable journal must not stop a read-only query.
  }
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
