#include "slr/cli/recover_command.hpp"

#include <iostream>
#include <memory>

#include "slr/archive/archive_error.hpp"
#include "slr/archive/recover.hpp"

namespace slr::cli {

std::function<int()> add_recover_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("recover", "Rebuild an archive's .h5 from its journal (after a crash or if the .h5 "
                                            "was lost); refuses while a sweep is writing it");
  cmd->add_option("archive", *path, "Archive (.h5; its journal is <archive>.journal)")->required();
  return [path, cmd]() -> int {
    if (!*cmd) return -1;
    archive::recover_report report;
    try {
      report = archive::recover(*path);
    } catch (const archive::archive_not_found_error& e) {
      throw std::invalid_argument(*path + ": " + e.what());
    }
    std::cout << "recovered " << *path << ": " << report.points << " points (" << report.point_records
              << " point records), " << report.runs << " runs, from " << report.journal_bytes << " journal bytes";
    if (report.ignored_bytes > 0) std::cout << "; removed a torn tail of " << report.ignored_bytes << " bytes";
    std::cout << " (" << report.seconds << " s)\n";
    return 0;
  };
}

} // namespace slr::cli
