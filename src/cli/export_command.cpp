#include "slr/cli/export_command.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "slr/archive/grid_export.hpp"
#include "slr/archive/reader.hpp"
#include "slr/cli/archive_input.hpp"
#include "slr/cli/output_file.hpp"
#include "slr/query/grid.hpp"
#include "slr/query/output.hpp"
#include "slr/query/query.hpp"

namespace slr::cli {
namespace {
struct export_arguments {
  archive_input input;
  std::string format;
  std::string output;
  std::vector<std::string> axes;
  std::vector<std::string> columns;
  bool force = false;
};
} // namespace

std::function<int()> add_export_command(CLI::App& app) {
  auto args = std::make_shared<export_arguments>();
  auto* cmd = app.add_subcommand("export", "Export the points of an archive as CSV or as an HDF5 grid (one N-D "
                                           "dataset per observable, axes as dimension scales)");
  args->input.add_to(*cmd);
  cmd->add_option("--format", args->format, "csv (one row per point, every column) or grid (HDF5 for xarray/h5py)")
      ->required();
  cmd->add_option("-o,--output", args->output, "Output file ('-' = stdout for csv); never the archive itself")->required();
  cmd->add_flag("--force", args->force, "Overwrite an existing output file");
  cmd->add_option_function<std::string>(
      "--axes", [args](const std::string& text) { args->axes = list_argument(text); },
      "grid: the dimensions, comma-separated (default: the parameters that vary, those that are functions of "
      "another (zipped lists, method options) as its coordinates)");
  cmd->add_option_function<std::string>(
      "--columns", [args](const std::string& text) { args->columns = list_argument(text); },
      "csv: columns to write (default all); grid: observables (default every result column with a value)");

  return [args, cmd]() -> int {
    if (!*cmd) return -1;
    if (args->format != "csv" && args->format != "grid")
      throw std::invalid_argument("--format: unknown export format '" + args->format + "' (expected csv or grid)");
    if (args->format == "csv" && !args->axes.empty()) throw std::invalid_argument("--axes: only used with --format grid");
    if (args->output.empty()) throw std::invalid_argument("--output: empty path");
    if (args->output != "-") check_output_path(args->output, {args->input.path}, args->force);
    const auto points = args->input.load_filtered();
    // An empty export is a filter that went wrong, not a result (load_filtered said why on stderr);
    // nothing is written.
    if (points.rows() == 0)
      throw std::invalid_argument(args->input.path + ": no point to export (the filters keep no row)");

    if (args->format == "csv") {
      query::query_options options;
      options.columns = args->columns.empty() ? std::vector<std::string>{"all"} : args->columns;
      const auto rows = query::run_query(points, options).rows;
      if (args->output == "-") {
        query::write_output(std::cout, rows, query::output_format::csv);
        return 0;
      }
      std::ostringstream out;
      query::write_output(out, rows, query::output_format::csv);
      write_output_text(args->output, out.str());
      std::cerr << "slr-sweep: wrote " << rows.rows() << " rows to " << args->output << "\n";
      return 0;
    }

    if (args->output == "-") throw std::invalid_argument("--output: the grid format needs a file");
    const archive::reader source(args->input.path);
    const auto& attributes = source.attributes();
    query::grid_options options;
    options.axes = args->axes;
    options.variables = args->columns;
    options.descriptions = query::parse_parameter_descriptions(attributes.parameter_descriptions);
    auto build = query::make_grid(points, options);
    build.data.attributes["source_archive"] = std::filesystem::absolute(args->input.path).string();
    build.data.attributes["job_name"] = attributes.job_name;
    build.data.attributes["job_fingerprint"] = attributes.job_fingerprint;
    build.data.attributes["where"] = args->input.where;
    std::string statuses;
    for (const auto& s : args->input.statuses) statuses += (statuses.empty() ? "" : ",") + s;
    build.data.attributes["status_filter"] = statuses;
    write_output_file(args->output, [&](const std::filesystem::path& path) { archive::write_grid(path, build.data); });

    std::size_t cells = 1, filled = 0;
    std::string shape;
    for (const auto& axis : build.data.axes) {
      cells *= axis.size();
      shape += (shape.empty() ? "" : " x ") + axis.name + "(" + std::to_string(axis.size()) + ")";
    }
    std::string coordinates;
    for (const auto& c : build.data.coordinates)
      coordinates += (coordinates.empty() ? "" : ", ") + c.name + " along " + build.data.axes[c.axis].name;
    for (const auto& s : build.data.text_variables.front().values) filled += s.empty() ? 0 : 1;
    std::cerr << "slr-sweep: wrote " << args->output << ": " << (shape.empty() ? "a single point" : shape)
              << (coordinates.empty() ? "" : " (coordinates " + coordinates + ")") << ", "
              << build.data.variables.size() << " observables, " << (cells - filled) << " of " << cells
              << " grid points missing";
    if (build.duplicate_rows > 0)
      std::cerr << ", " << build.duplicate_rows << " duplicate row(s) (latest kept)";
    std::cerr << "\n";
    if (cells >= 1000 && filled * 20 < cells)
      std::cerr << "slr-sweep: note: fewer than 5% of the grid points hold a result; methods or settings with different "
                   "axes are better exported separately (--where method=…)\n";
    return 0;
  };
}

} // namespace slr::cli
