#include "slr/cli/recover_command.hpp"

#include <cstdio>
#include <iostream>
#include <algorithm>
#include <limits>
#include <memory>

#include "slr/archive/archive_error.hpp"
#include "slr/archive/recover.hpp"
#include "slr/archive/writer.hpp"
#include "slr/job/expansion.hpp"
#include "slr/job/job_file.hpp"
#include "slr/methods/registry.hpp"
#include "slr/sweep/archive_job.hpp"

namespace slr::cli {

namespace {
// The damaged stretches as describe_damage lists them.
struct journal_contents_view {
  std::vector<archive::journal_damage> damage;
  [[nodiscard]] std::uint64_t bytes() const {
    archive::journal_contents c;
    c.damage = damage;
    return c.damaged_bytes();
  }
  [[nodiscard]] std::string text() const {
    archive::journal_contents c;
    c.damage = damage;
    return archive::describe_damage(c, 20);
  }
};
} // namespace

std::function<int()> add_recover_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto job_path = std::make_shared<std::string>();
  auto salvage = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("recover", "Rebuild an archive's .h5 from its journal (after a crash or if the .h5 "
                                            "was lost; a .h5 without its journal gets one); refuses while a sweep is "
                                            "writing it");
  cmd->add_option("archive", *path, "Archive (.h5; its journal is <archive>.journal)")->required();
  cmd->add_flag("--salvage", *salvage,
                "Rebuild a damaged journal from every intact record (the damaged file is kept as "
                "<archive>.journal.damaged-<time>; rows the .h5 still holds are merged back)");
  cmd->add_option("--job", *job_path,
                  "With --salvage: the job file, for a journal whose job record is damaged and whose .h5 is lost; "
                  "accepted only if every intact point of the journal is a point of it")
      ->check(CLI::ExistingFile);
  return [path, job_path, salvage, cmd]() -> int {
    if (!*cmd) return -1;
    archive::recover_options options;
    options.salvage = *salvage;
    options.check = sweep::job_row_check();
    if (!job_path->empty()) {
      if (!*salvage) throw std::invalid_argument("--job: only with --salvage (a journal with a damaged job record)");
      options.job = sweep::journal_job_of(job::load_job_file(*job_path));
    }
    archive::recover_report report;
    try {
      report = archive::recover(*path, options);
    } catch (const archive::archive_not_found_error& e) {
      throw std::invalid_argument(*path + ": " + e.what());
    } catch (const archive::input_refused_error& e) {
      throw std::invalid_argument(*path + ": " + e.what());
    }
    std::cout << "recovered " << *path << ": " << report.points << " points (" << report.point_records
              << " point records), " << report.runs << " runs, journal of " << report.journal_bytes << " bytes";
    if (report.ignored_bytes > 0)
      std::cout << "; cut an incomplete last record of " << report.ignored_bytes
                << " bytes (an append a crash interrupted: never acknowledged)";
    std::cout << " (" << report.seconds << " s)\n";
    if (!report.damage.empty()) {
      journal_contents_view damaged{report.damage};
      std::cout << "salvaged: kept all " << report.intact_records << " intact records; dropped " << report.damage.size()
                << " damaged stretch(es) of " << damaged.bytes() << " bytes in all; the damaged journal is kept as "
                << report.damaged_copy.string() << "\n"
                << damaged.text() << "\n";
    }
    if (report.job_from_snapshot) std::cout << "the job record was damaged: the job was taken from the .h5\n";
    if (report.job_from_option) std::cout << "the job record was damaged: the job was taken from " << *job_path << "\n";
    if (report.merged_points > 0)
      std::cout << "merged back " << report.merged_points << " rows that the .h5 held and the journal had lost\n";
    if (!report.refused.empty()) {
      std::cout << "left out " << report.refused.size() << " row(s) of the .h5 that are not points of the job:\n";
      for (std::size_t i = 0; i < report.refused.size() && i < 10; ++i)
        std::cout << "  " << archive::point_id_text(report.refused[i].point_id) << ": " << report.refused[i].reason << "\n";
      if (report.refused.size() > 10) std::cout << "  … and " << report.refused.size() - 10 << " more\n";
    }
    if (!report.merge_note.empty()) std::cout << "note: " << report.merge_note << "\n";
    if (!report.damage.empty()) {
      std::cout << "lost: " << report.lost_point_ids.size() << " of the " << report.damaged_point_records
                << " damaged point records whose id could be read are in neither an intact record nor the .h5";
      for (std::size_t i = 0; i < report.lost_point_ids.size() && i < 20; ++i)
        std::cout << (i == 0 ? ": " : " ") << archive::point_id_text(report.lost_point_ids[i]);
      if (report.lost_point_ids.size() > 20) std::cout << " …";
      std::cout << "\n";
      if (report.unreadable_damaged_bytes > 0)
        std::cout << "lost: " << report.unreadable_damaged_bytes
                  << " damaged bytes held records whose headers did not survive (not counted above)\n";
    }
    // The job's own count: what a resume will compute, whatever the damage hid.
    try {
      const auto job = job::parse_job(archive::read_stored_job(*path).text, *path + ":job_text");
      const auto units = job::expand(job, std::numeric_limits<std::uint64_t>::max());
      const auto total = job::point_count(units);
      if (report.points < total || !report.damage.empty())
        std::cout << "the job has " << total << " points; " << (total - std::min<std::size_t>(total, report.points))
                  << " are missing and `slr-sweep resume " << *path
                  << "` computes them (results depend only on the seed and the point, so they equal any lost ones)\n";
    } catch (const std::exception&) {
      // The count is advisory: a job this build cannot expand was reported by resume already.
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
      report = archive::upgrade(
          *path,
          [](const std::string& method, std::vector<grid::parameter_value> cells) {
            return methods::retype_parameters(method, std::move(cells));
          },
          sweep::job_row_check());
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
