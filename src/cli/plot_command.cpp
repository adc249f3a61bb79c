#include "slr/cli/plot_command.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "slr/cli/archive_input.hpp"

extern char** environ;

namespace slr::cli {
namespace {

struct plot_arguments {
  archive_input input;
  std::vector<std::string> more_archives; // drawn together with input.path (rows concatenated)
  std::string figure;
  std::string output;
  std::string formats = "png,svg";
  std::string style = "screen";
  std::string xscale = "auto";
  std::string series;
  std::string name;
};

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// The directory holding the slr_sweep package (see plot_command.hpp for the order).
std::filesystem::path python_package_dir() {
  if (auto dir = environment("SLR_SWEEP_PYTHONPATH"); !dir.empty()) return dir;
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto installed = self.parent_path().parent_path() / "share" / "slr-sweep" / "python";
    if (std::filesystem::exists(installed / "slr_sweep" / "plot.py")) return installed;
  }
  return SLR_PYTHON_SOURCE_DIR;
}

// Runs argv with PYTHONPATH prefixed by `python_path`; returns the exit status, or throws if
// the interpreter cannot be started.
int run_python(const std::vector<std::string>& argv, const std::string& python_path) {
  std::vector<std::string> env_storage;
  const std::string old = environment("PYTHONPATH");
  env_storage.push_back("PYTHONPATH=" + python_path + (old.empty() ? "" : ":" + old));
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "PYTHONPATH=", 11) != 0) env_storage.emplace_back(*e);
  std::vector<char*> envp, args;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_storage = argv;
  for (auto& a : argv_storage) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), envp.data());
  if (rc != 0)
    throw std::runtime_error("plot: cannot run the Python interpreter '" + argv[0] + "': " + std::strerror(rc) +
                             " (install python3 with python3-numpy, python3-h5py and python3-matplotlib, or set "
                             "SLR_PYTHON to an interpreter that has them)");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(std::string("plot: waitpid failed: ") + std::strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

} // namespace

std::function<int()> add_plot_command(CLI::App& app) {
  auto args = std::make_shared<plot_arguments>();
  auto* cmd = app.add_subcommand("plot", "Draw figures (PNG and SVG) from an archive with matplotlib");
  args->input.add_to(*cmd);
  cmd->add_option("more_archives", args->more_archives,
                  "Further archives drawn in the same figures (e.g. Fig 3: the theory and the ERM archive); "
                  "--where/--status apply to each");
  // The figure names live in one table, src/python/slr_sweep/figures.py's FIGURES: the name is
  // forwarded unchecked and the Python side refuses an unknown one (one line naming the known
  // ones, exit 2, passed on below).
  cmd->add_option("--figure", args->figure,
                  "A figure of slr_sweep.figures.FIGURES, e.g. finite-alpha (Fig 3) or tied-learning-curve, or all "
                  "(every figure the archive has rows for); an unknown name lists them")
      ->required();
  cmd->add_option("-o,--output", args->output, "Output directory (created if missing)")->required();
  cmd->add_option("--formats", args->formats, "Image formats, comma-separated (png, svg, pdf)")->capture_default_str();
  // Styles and scales are declared in figures.py (STYLES, XSCALES) and checked there, like --figure.
  cmd->add_option("--style", args->style,
                  "screen (4.6 x 3.6 in panels), paper (one column of a two-column article: 3.4 in wide, 8 pt "
                  "text, 300 dpi) or paper-wide (7 in wide); legends below the panels in the paper styles")
      ->capture_default_str();
  cmd->add_option("--xscale", args->xscale, "alpha axes: auto (log when alpha spans more than a factor 20), log or linear")
      ->capture_default_str();
  cmd->add_option("--series", args->series,
                  "A parameter whose values split each activation's curves into series (population, finite-alpha, "
                  "trajectory), e.g. r_k: one curve per r_k instead of the best r per alpha");
  cmd->add_option("--name", args->name,
                  "Output file stem (default: <job name>-<figure>; with --figure all: <name>-<figure>)");

  return [args, cmd]() -> int {
    if (!*cmd) return -1;
    if (args->figure.empty()) throw std::invalid_argument("--figure: empty figure name");
    for (const auto& f : list_argument(args->formats))
      if (f != "png" && f != "svg" && f != "pdf")
        throw std::invalid_argument("--formats: unknown format '" + f + "' (expected png, svg or pdf)");
    // Read and filter in C++ (one filter grammar); the helper gets the selected point ids.
    std::vector<std::string> archives = {args->input.path};
    archives.insert(archives.end(), args->more_archives.begin(), args->more_archives.end());
    std::vector<std::uint64_t> selected_ids;
    for (const auto& path : archives) {
      archive_input input = args->input;
      input.path = path;
      const auto points = input.load_filtered();
      const auto& column = points.at("point_id", "--where");
      selected_ids.insert(selected_ids.end(), column.integers.begin(), column.integers.end());
    }
    if (selected_ids.empty()) {
      std::string names;
      for (const auto& path : archives) names += (names.empty() ? "" : ", ") + path;
      throw std::invalid_argument("--where/--status: no points of " + names + " match");
    }
    std::error_code error;
    // The figure name is checked by the helper (it owns the table): a refused name must not leave
    // behind the folder made for it.
    const bool output_existed = std::filesystem::exists(args->output, error);
    std::filesystem::create_directories(args->output, error);
    if (error || !std::filesystem::is_directory(args->output))
      throw std::invalid_argument("--output: cannot create directory " + args->output);

    std::vector<std::string> argv = {environment("SLR_PYTHON").empty() ? std::string(SLR_PYTHON_EXECUTABLE)
                                                                       : environment("SLR_PYTHON"),
                                     "-m", "slr_sweep.plot"};
    argv.insert(argv.end(), archives.begin(), archives.end());
    argv.insert(argv.end(),
                {"--figure", args->figure, "-o", args->output, "--formats", args->formats, "--style", args->style,
                 "--xscale", args->xscale});
    if (!args->series.empty()) argv.insert(argv.end(), {"--series", args->series});
    if (!args->name.empty()) argv.insert(argv.end(), {"--name", args->name});
    std::filesystem::path ids_file;
    if (!args->input.where.empty() || !args->input.statuses.empty()) {
      ids_file = std::filesystem::path(args->output) / (".slr-plot-ids-" + std::to_string(getpid()) + ".txt");
      std::ofstream ids(ids_file);
      for (const auto id : selected_ids) ids << id << "\n";
      ids.close();
      if (!ids) throw std::runtime_error("plot: cannot write " + ids_file.string());
      argv.insert(argv.end(), {"--point-ids", ids_file.string()});
    }
    int code = 0;
    try {
      code = run_python(argv, python_package_dir().string());
    } catch (...) {
      if (!ids_file.empty()) std::filesystem::remove(ids_file, error);
      throw;
    }
    if (!ids_file.empty()) std::filesystem::remove(ids_file, error);
    if (code != 0 && !output_existed && std::filesystem::is_empty(args->output, error))
      std::filesystem::remove(args->output, error);
    // The helper prints its own one-line error; 2 = bad input (also an unknown figure), 3 = a
    // missing Python package.
    if (code == 2) return 2;
    return code == 0 ? 0 : 1;
  };
}

} // namespace slr::cli
