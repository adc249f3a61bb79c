#include "slr/cli/recover_command.hpp"

#include <cstdio>
#include <iostream>
#include <memory>

#include "slr/archive/archive_error.hpp"
#include "slr/archive/recover.hpp"
#include "slr/methods/registry.hpp"

namespace slr::cli {

namespace {
std::string hex_id(std::uint64_t id) {
  char text[24];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(id));
  return text;
}
} // namespace

std::function<int()> add_recover_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto salvage = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("recover", "Rebuild an archive's .h5 from its journal (after a crash or if the .h5 "
                                            "was lost); refuses while a sweep is writing it");
  cmd->add_option("archive", *path, "Archive (.h5; its journal is <archive>.journal)")->required();
  cmd->add_flag("--salvage", *salvage,
                "Rebuild a damaged journal from every intact record (the damaged file is kept as "
                "<archive>.journal.damaged-<time>; rows the .h5 still holds are merged back)");
  return [path, salvage, cmd]() -> int {
    if (!*cmd) return -1;
    archive::recover_report report;
    try {
      report = archive::recover(*path, {*salvage});
    } catch (const archive::archive_not_found_error& e) {
      throw std::invalid_argument(*path + ": " + e.what());
    }
    std::cout << "recovered " << *path << ": " << report.points << " points (" << report.point_records
              << " point records), " << report.runs << " runs, journal of " << report.journal_bytes << " bytes";
    if (report.ignored_bytes > 0) std::cout << "; removed a torn tail of " << report.ignored_bytes << " bytes";
    std::cout << " (" << report.seconds << " s)\n";
    if (!report.damage.empty()) {
      std::uint64_t bytes = 0;
      for (const auto& d : report.damage) bytes += d.end - d.begin;
      std::cout << "salvaged: kept all " << report.intact_records << " intact records; dropped " << report.damage.size()
                << " damaged stretch(es) of " << bytes << " bytes in all; the damaged journal is kept as "
                << report.damaged_copy.string() << "\n";
      for (const auto& d : report.damage) {
        std::cout << "  bytes " << d.begin << "-" << d.end << ": " << d.record_type << " record";
        if (d.has_point_id) std::cout << " of point " << hex_id(d.point_id) << " (id unverified)";
        std::cout << "\n";
      }
    }
    if (report.job_from_snapshot) std::cout << "the job record was damaged: the job was taken from the .h5\n";
    if (report.merged_points > 0)
      std::cout << "merged back " << report.merged_points << " rows that the .h5 held and the journal had lost\n";
    if (!report.merge_note.empty()) std::cout << "note: " << report.merge_note << "\n";
    if (!report.damage.empty()) {
      if (report.lost_point_ids.empty())
        std::cout << "lost: no point whose id could be read from a damaged record is missing\n";
      else {
        std::cout << "lost: " << report.lost_point_ids.size() << " point(s) read from damaged records are missing:";
        for (const auto id : report.lost_point_ids) std::cout << " " << hex_id(id);
        std::cout << "\n";
      }
      std::cout << "`slr-sweep resume " << *path
                << "` recomputes every missing point (results depend only on the seed and the point, so they are "
                   "the same as the lost ones)\n";
    }
    return 0;
  };
}

std::function<int()> add_upgrade_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("upgrade", "Rewrite an archive of the first schema (fixed SLR columns, options as "
                                            "text) losslessly as the current one (every parameter a typed column); "
                                            "the old journal is kept as <archive>.journal.schema1");
  cmd->add_option("archive", *path, "Archive (.h5; its journal is <archive>.journal)")->required();
  return [path, cmd]() -> int {
    if (!*cmd) return -1;
    archive::upgrade_report report;
    try {
      report = archive::upgrade(*path, [](const std::string& method, std::vector<grid::parameter_value> cells) {
        return methods::retype_parameters(method, std::move(cells));
      });
    } catch (const archive::archive_not_found_error& e) {
      throw std::invalid_argument(*path + ": " + e.what());
    }
    if (report.already_current) {
      std::cout << *path << " is already of the current archive schema (" << report.points
                << " points): nothing to do\n";
      return 0;
    }
    std::cout << "upgraded " << *path << ": " << report.rewritten_records << " point records rewritten with typed "
              << "parameters, " << report.points << " points in the rebuilt .h5 (" << report.seconds
              << " s); the old journal is kept as " << report.old_journal.string() << "\n";
    return 0;
  };
}

} // namespace slr::cli
