#include "slr/cli/query_command.hpp"

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "slr/cli/archive_input.hpp"
#include "slr/cli/output_file.hpp"
#include "slr/query/output.hpp"
#include "slr/query/query.hpp"

namespace slr::cli {
namespace {
struct query_arguments {
  archive_input input;
  query::query_options options;
  std::string format = "table";
  std::string output = "-";
  bool force = false;
};
} // namespace

std::function<int()> add_query_command(CLI::App& app) {
  auto args = std::make_shared<query_arguments>();
  auto* cmd = app.add_subcommand("query", "Filter, aggregate and print the points of an archive (read-only; safe "
                                          "while a sweep is running)");
  args->input.add_to(*cmd, true);
  const auto list = [cmd](const char* name, std::vector<std::string>& target, const char* help) {
    cmd->add_option_function<std::string>(
        name, [&target](const std::string& text) { target = list_argument(text); }, help);
  };
  list("--columns", args->options.columns,
       "Columns to print, comma-separated; 'all' for every column (default: method, the parameters that vary, status "
       "and the result columns with values)");
  list("--group-by", args->options.group_by,
       "Group rows by these columns ('parameters' = every parameter except repeat) and print count and "
       "mean/std/min/max of the other numeric columns (e.g. over seeds/repeats)");
  list("--stats", args->options.statistics, "Statistics of --group-by: mean,std,min,max,count (default mean,std,min,max)");
  list("--min-over", args->options.min_over,
       "For each combination of the other keys keep the row with the smallest test risk (test_risk, else risk; "
       "after --group-by their means) over these columns, e.g. r_k,r_v; the winning values stay in the output");
  cmd->add_option("--minimise", args->options.minimise,
                  "The column --min-over minimises instead of the test risk, e.g. test_clean (tied attention); after "
                  "--group-by its mean");
  cmd->add_option("--format", args->format,
                  "Output format: table (headline results; --wide for all), csv or jsonl (every parameter and result)")
      ->capture_default_str();
  cmd->add_flag("--wide", args->options.wide, "Table: every result column with a value, not only the headline ones");
  cmd->add_option("-o,--output", args->output, "Output file ('-' = stdout); never the archive itself")
      ->capture_default_str();
  cmd->add_flag("--force", args->force, "Overwrite an existing output file");

  return [args, cmd]() -> int {
    if (!*cmd) return -1;
    const auto format = query::parse_output_format(args->format);
    if (args->output != "-") check_output_path(args->output, {args->input.paths.begin(), args->input.paths.end()}, args->force);
    const auto points = args->input.load_filtered();
    // The filters already ran in load_filtered (they also print the freshness note).
    auto options = args->options;
    options.every_parameter = format != query::output_format::table;
    options.where.clear();
    options.statuses.clear();
    const auto result = query::run_query(points, options);
    if (result.groups_without_risk > 0)
      std::cerr << "slr-sweep: note: --min-over left out " << result.groups_without_risk
                << " combination(s) without a finite "
                << (options.minimise.empty() ? std::string("test_risk or risk") : options.minimise) << "\n";
    if (args->output == "-") {
      query::write_output(std::cout, result.rows, format);
      std::cout.flush();
    } else {
      std::ostringstream out;
      query::write_output(out, result.rows, format);
      write_output_text(args->output, out.str());
    }
    return 0;
  };
}

} // namespace slr::cli
