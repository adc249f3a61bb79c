#include "slr/sweep/archive_job.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "slr/archive/archive_error.hpp"
#include "slr/methods/registry.hpp"

namespace slr::sweep {

archive::journal_job journal_job_of(const job::job_spec& job, const std::vector<job::sweep_unit>& units) {
  // A shard's archive carries the fingerprint of the whole job (`merge` joins archives by it).
  return {job.text, job.shard ? job::fingerprint(job) : job::fingerprint(units), job.source_name, job.name};
}

archive::journal_job journal_job_of(const job::job_spec& job) { return journal_job_of(job, job::expand(job)); }

archive::writer create_archive(const std::filesystem::path& path, const job::job_spec& job,
                               archive::writer::if_exists policy, archive::writer_options options) {
  return archive::writer::create(path, journal_job_of(job), policy, options);
}

job::job_spec stored_job(const archive::writer& writer) {
  return job::parse_job(writer.job_text(), writer.path().string() + ":job_text");
}

namespace {

struct expected_point {
  std::string method;
  std::uint32_t repeat = 0;
  std::uint64_t seed = 0;
  std::vector<grid::parameter_value> parameters;
};
using expected_points = std::unordered_map<std::uint64_t, expected_point>;

bool same_value(const grid::parameter_value& a, const grid::parameter_value& b) {
  using kind = grid::parameter_value::kind;
  if (a.type == kind::text || b.type == kind::text) return a.to_text() == b.to_text();
  const double x = a.to_number(), y = b.to_number();
  return x == y || (std::isnan(x) && std::isnan(y));
}

// The cell `stored` re-typed as `declared` (a .h5 stores an integer column as float64 once some
// row lacks it); unchanged where the value does not fit the declared type.
grid::parameter_value retyped(const grid::parameter_value& stored, const grid::parameter_value& declared) {
  using kind = grid::parameter_value::kind;
  if (stored.type == declared.type) return stored;
  if (declared.type == kind::integer && stored.type == kind::real && stored.real == std::trunc(stored.real))
    return grid::parameter_value::of_integer(stored.name, static_cast<std::int64_t>(stored.real));
  if (declared.type == kind::real && stored.type == kind::integer)
    return grid::parameter_value::of_real(stored.name, static_cast<double>(stored.integer));
  return stored;
}

std::string check_row(const expected_points& points, archive::point_row& row) {
  const auto it = points.find(row.point_id);
  if (it == points.end()) return "point id " + archive::point_id_text(row.point_id) + " is not a point of the job";
  const auto& expected = it->second;
  if (row.method != expected.method)
    return "point " + archive::point_id_text(row.point_id) + " is a '" + expected.method + "' point, the row says '" + row.method + "'";
  if (row.repeat != expected.repeat || row.seed != expected.seed)
    return "point " + archive::point_id_text(row.point_id) + ": repeat/seed " + std::to_string(row.repeat) + "/" + std::to_string(row.seed) +
           " differ from the job's " + std::to_string(expected.repeat) + "/" + std::to_string(expected.seed);
  std::vector<grid::parameter_value> cells;
  std::vector<bool> used(row.parameters.size(), false);
  for (const auto& declared : expected.parameters) {
    std::size_t k = 0;
    while (k < row.parameters.size() && row.parameters[k].name != declared.name) ++k;
    if (k == row.parameters.size()) {
      // A .h5 cannot tell an empty text from an absent one.
      if (declared.type == grid::parameter_value::kind::text && declared.text.empty()) cells.push_back(declared);
      continue;
    }
    if (!same_value(row.parameters[k], declared))
      return "point " + archive::point_id_text(row.point_id) + ": " + declared.name + " = " + row.parameters[k].to_text() +
             " in the row, " + declared.to_text() + " in the job";
    used[k] = true;
    cells.push_back(retyped(row.parameters[k], declared));
  }
  for (std::size_t k = 0; k < row.parameters.size(); ++k)
    if (!used[k]) cells.push_back(row.parameters[k]);
  row.parameters = std::move(cells);
  return {};
}

} // namespace

archive::row_check job_row_check() {
  // One expansion per job text, shared by the copies of the check.
  struct cache {
    std::mutex mutex;
    std::unordered_map<std::string, std::shared_ptr<const expected_points>> by_text;
  };
  auto shared = std::make_shared<cache>();
  return [shared](const std::string& job_text, archive::point_row& row) -> std::string {
    std::shared_ptr<const expected_points> points;
    {
      const std::lock_guard lock(shared->mutex);
      auto& slot = shared->by_text[job_text];
      if (!slot) {
        auto built = std::make_shared<expected_points>();
        const auto job = job::parse_job(job_text, "the archive's job");
        for (const auto& unit : job::expand(job, std::numeric_limits<std::uint64_t>::max()))
          for (const auto& sp : unit.points)
            built->emplace(sp.id, expected_point{sp.point.method, sp.repeat, sp.point.seed,
                                                 methods::point_parameters(sp.point)});
        slot = std::move(built);
      }
      points = slot;
    }
    return check_row(*points, row);
  };
}

job::extension_check extend_job(archive::writer& writer, const job::job_spec& extended) {
  // Both jobs passed the caller's point limit already.
  constexpr auto no_limit = std::numeric_limits<std::uint64_t>::max();
  const auto stored = stored_job(writer);
  if (stored.shard)
    throw archive::archive_error("cannot extend " + writer.path().string() + ": it holds shard " +
                                 std::to_string(stored.shard->index) + "/" + std::to_string(stored.shard->count) +
                                 " of its job; merge the shards (slr-sweep merge), then extend the merged archive");
  const auto original_units = job::expand(stored, no_limit);
  const auto extended_units = job::expand(extended, no_limit);
  const auto check = job::check_extension(original_units, extended_units);
  if (!check.accepted) throw archive::archive_error("cannot extend " + writer.path().string() + ": " + check.reason);
  writer.extend_job(journal_job_of(extended, extended_units));
  return check;
}

} // namespace slr::sweep
