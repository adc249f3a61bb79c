// `merge`: read every input without changing it, check, then write the output as a new archive.
#include "slr/sweep/merge.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "slr/archive/archive_error.hpp"
#include "slr/archive/journal.hpp"
#include "slr/archive/reader.hpp"
#include "slr/archive/writer.hpp"
#include "slr/grid/result_record.hpp"
#include "slr/job/expansion.hpp"
#include "slr/job/job_file.hpp"
#include "slr/sweep/archive_job.hpp"

namespace slr::sweep {
namespace {

namespace fs = std::filesystem;

struct input_archive {
  std::string path;
  archive::journal_job job;
  std::vector<archive::point_row> points;
};

[[noreturn]] void refuse(const std::string& path, const std::string& reason) {
  throw archive::input_refused_error("merge: " + path + ": " + reason + " (nothing was written)");
}

// The archive as `status` sees it: the journal's records over the snapshot, or the journal alone
// where the .h5 cannot be read; no lock taken, no byte changed.
input_archive read_input(const std::string& path) {
  const bool have_h5 = fs::exists(path), have_journal = fs::exists(archive::journal_path(path));
  if (!have_h5 && !have_journal) refuse(path, "no such archive (neither the .h5 nor its journal exists)");
  input_archive in{path, {}, {}};
  try {
    in.job = archive::read_stored_job(path);
  } catch (const archive::archive_error& e) {
    refuse(path, std::string("cannot read its job: ") + e.what());
  }
  std::optional<archive::journal_view> journal;
  if (have_journal) {
    try {
      journal = archive::read_journal_view(path);
    } catch (const archive::archive_error& e) {
      refuse(path, std::string("its journal cannot be read: ") + e.what());
    }
    if (journal->fresh.damaged_stretches > 0)
      refuse(path, "its journal is damaged (" + journal->fresh.damage_text + "); `slr-sweep recover --salvage " + path +
                       "` first");
    if (journal->fresh.writer_pid != 0)
      refuse(path, "a sweep is writing it (process " + std::to_string(journal->fresh.writer_pid) +
                       "); merge it once that sweep has stopped");
  }
  std::optional<archive::reader> snapshot;
  std::string snapshot_problem;
  if (have_h5) {
    try {
      snapshot.emplace(path);
    } catch (const archive::archive_error& e) {
      snapshot_problem = e.what();
    }
  }
  if (snapshot) {
    std::vector<archive::refused_row> refused;
    (void)snapshot->points(&refused);
    if (!refused.empty())
      refuse(path, "row of point " + archive::point_id_text(refused.front().point_id) + " is damaged (" +
                       refused.front().reason + "); `slr-sweep recover " + path + "` first");
    in.points = snapshot->live().points;
  } else if (journal) {
    in.points = std::move(journal->points); // a damaged or missing .h5: the journal is the truth
  } else {
    refuse(path, "its .h5 cannot be read (" + snapshot_problem + ") and it has no journal");
  }
  return in;
}

std::string bits(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

// An extra_json text with its measurement keys (grid::is_measurement) removed at every depth, as
// compact JSON; the text itself if it is not JSON.
std::string without_measurements(const std::string& text) {
  if (text.empty()) return text;
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded()) return text;
  const std::function<void(nlohmann::json&)> strip = [&](nlohmann::json& node) {
    if (node.is_object()) {
      for (auto it = node.begin(); it != node.end();) {
        if (grid::is_measurement(it.key())) {
          it = node.erase(it);
        } else {
          strip(*it);
          ++it;
        }
      }
    } else if (node.is_array()) {
      for (auto& element : node) strip(element);
    }
  };
  strip(json);
  return json.dump();
}

// The first difference between two copies of a point, "" if they agree bit for bit (timings aside).
std::string difference(const archive::point_row& a, const archive::point_row& b) {
  if (a.method != b.method) return "method " + a.method + " vs " + b.method;
  if (a.repeat != b.repeat) return "repeat " + std::to_string(a.repeat) + " vs " + std::to_string(b.repeat);
  if (a.seed != b.seed) return "seed " + std::to_string(a.seed) + " vs " + std::to_string(b.seed);
  if (a.parameters.size() != b.parameters.size()) return "parameter count";
  for (std::size_t i = 0; i < a.parameters.size(); ++i)
    if (a.parameters[i].name != b.parameters[i].name || a.parameters[i].to_text() != b.parameters[i].to_text())
      return "parameter " + a.parameters[i].name + " = " + a.parameters[i].to_text() + " vs " + b.parameters[i].name +
             " = " + b.parameters[i].to_text();
  if (a.status != b.status) return "status " + a.status + " vs " + b.status;
  if (a.message != b.message) return "message '" + a.message + "' vs '" + b.message + "'";
  if (a.extra_json != b.extra_json && without_measurements(a.extra_json) != without_measurements(b.extra_json))
    return "extra_json";
  const auto measured = [](const std::string& name) { return grid::is_measurement(name); };
  const auto values = [&](const archive::point_row& r) {
    std::map<std::string, double> out;
    for (std::size_t i = 0; i < r.value_names.size() && i < r.values.size(); ++i)
      if (!measured(r.value_names[i])) out.emplace(r.value_names[i], r.values[i]);
    return out;
  };
  const auto va = values(a), vb = values(b);
  for (const auto& [name, x] : va) {
    const auto it = vb.find(name);
    const double y = it == vb.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
    // A result absent from one copy is NaN there (the archive's empty cell).
    if (std::bit_cast<std::uint64_t>(x) != std::bit_cast<std::uint64_t>(y) && !(std::isnan(x) && std::isnan(y)))
      return name + " = " + bits(x) + " vs " + bits(y);
  }
  for (const auto& [name, y] : vb)
    if (!va.contains(name) && !std::isnan(y)) return name + " = (absent) vs " + bits(y);
  return {};
}

} // namespace

merge_report merge(const merge_arguments& args) {
  if (args.inputs.empty()) throw std::invalid_argument("merge: at least one input archive is required");
  if (args.output.empty()) throw std::invalid_argument("merge: -o OUTPUT is required");
  const auto out_path = fs::path(args.output);
  if (fs::exists(out_path) || fs::exists(archive::journal_path(out_path)))
    throw archive::archive_exists_error("merge: output " + args.output +
                                        " exists (or its journal does); merge writes a new archive only");
  if (!out_path.parent_path().empty() && !fs::is_directory(out_path.parent_path()))
    throw std::invalid_argument("merge: -o: directory " + out_path.parent_path().string() + " does not exist");
  for (const auto& in : args.inputs) {
    std::error_code ec;
    if (fs::equivalent(in, out_path, ec)) refuse(in, "is the output");
  }

  // Read and check everything before creating anything.
  std::vector<input_archive> inputs;
  for (const auto& path : args.inputs) inputs.push_back(read_input(path));
  const auto& first = inputs.front();
  for (const auto& in : inputs)
    if (in.job.fingerprint != first.job.fingerprint)
      refuse(in.path, "holds job '" + in.job.name + "' (fingerprint " + in.job.fingerprint + "), not the job of " +
                          first.path + " ('" + first.job.name + "', fingerprint " + first.job.fingerprint + ")");
  job::job_spec whole;
  try {
    whole = job::parse_job(job::whole_job_text(first.job.text), first.path + ":job_text");
  } catch (const std::invalid_argument& e) {
    refuse(first.path, std::string("its job cannot be parsed by this build: ") + e.what());
  }
  const auto units = job::expand(whole, std::numeric_limits<std::uint64_t>::max());
  if (job::fingerprint(units) != first.job.fingerprint)
    refuse(first.path, "its job expands to fingerprint " + job::fingerprint(units) + " in this build, not the " +
                           first.job.fingerprint + " it was run with");

  const auto check = job_row_check();
  std::unordered_map<std::uint64_t, std::pair<archive::point_row, std::string>> chosen; // id → row, its file
  merge_report report;
  report.inputs = inputs.size();
  report.job_name = whole.name;
  report.fingerprint = first.job.fingerprint;
  for (auto& in : inputs)
    for (auto& row : in.points) {
      if (const auto reason = check(whole.text, row); !reason.empty()) refuse(in.path, reason);
      const auto [it, inserted] = chosen.try_emplace(row.point_id, row, in.path);
      if (inserted) continue;
      ++report.duplicates;
      if (const auto diff = difference(it->second.first, row); !diff.empty())
        throw archive::input_refused_error("merge: point " + archive::point_id_text(row.point_id) + " differs between " +
                                           it->second.second + " and " + in.path + ": " + diff +
                                           " (nothing was written)");
    }

  // The output: the whole job, one run, the points in the job's order (one fsync), the snapshot.
  std::string command = "slr-sweep merge";
  for (const auto& in : args.inputs) command += " " + in;
  command += " -o " + args.output;
  auto writer = create_archive(out_path, whole);
  (void)writer.begin_run({1, "", command});
  std::vector<archive::point_row> rows;
  for (const auto& unit : units)
    for (const auto& p : unit.points) {
      ++report.job_points;
      if (const auto it = chosen.find(p.id); it != chosen.end()) rows.push_back(std::move(it->second.first));
    }
  report.points = rows.size();
  writer.record_batch(rows);
  writer.end_run("merged " + std::to_string(inputs.size()) + " archive(s)");
  return report;
}

} // namespace slr::sweep
