#include "slr/archive/writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <cmath>
#include <unordered_set>

#include "archive_model.hpp"
#include "slr/archive/journal.hpp"
#include "slr/archive/reader.hpp"
#include "snapshot.hpp"
#include "snapshot_merge.hpp"

namespace slr::archive {

namespace {
double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}
} // namespace

struct writer::state {
  std::filesystem::path path;
  writer_options options;
  journal_writer journal;
  archive_model model;
  std::unordered_map<std::uint64_t, grid::status> done;
  std::optional<std::uint32_t> current_run;
  std::size_t points_since_rebuild = 0;
  bool dirty = false;
  std::chrono::steady_clock::time_point last_rebuild = std::chrono::steady_clock::now();
  double last_rebuild_seconds = 0;
  std::string last_rebuild_error;
  open_report opened;

  state(std::filesystem::path p, writer_options o, journal_writer j)
      : path(std::move(p)), options(o), journal(std::move(j)) {}

  void apply(journal_entry&& entry) {
    if (const auto* row = std::get_if<point_row>(&entry)) {
      grid::status s = grid::status::failed;
      try {
        s = grid::parse_status(row->status);
      } catch (const std::invalid_argument&) {
        // An unknown status from another version counts as failed (a retry may fix it).
      }
      done[row->point_id] = s;
    }
    model.apply(std::move(entry));
  }

  void rebuild() {
    const auto start = std::chrono::steady_clock::now();
    write_snapshot(path, model.snapshot(journal.size_bytes(), current_run));
    last_rebuild = std::chrono::steady_clock::now();
    last_rebuild_seconds = std::chrono::duration<double>(last_rebuild - start).count();
    points_since_rebuild = 0;
    dirty = false;
  }

  void maybe_rebuild() {
    if (!dirty) return;
    const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_rebuild).count();
    // Bound the time spent rebuilding to max_rebuild_fraction of the wall time.
    const double min_interval = options.max_rebuild_fraction > 0 ? last_rebuild_seconds / options.max_rebuild_fraction : 0;
    if (since < min_interval) return;
    if (points_since_rebuild < options.rebuild_every_points && since < options.rebuild_every_seconds) return;
    try {
      rebuild();
      last_rebuild_error.clear();
    } catch (const archive_error& e) {
      // The points are durable in the journal already; a failed snapshot (e.g. a full disk)
      // must not turn their acknowledgement into an error. Retried at the next interval.
      last_rebuild_error = e.what();
      last_rebuild = std::chrono::steady_clock::now();
    }
  }
};

writer::writer(std::unique_ptr<state> s) noexcept : state_(std::move(s)) {}
writer::writer(writer&&) noexcept = default;
writer& writer::operator=(writer&&) noexcept = default;

writer::~writer() {
  if (state_ && state_->dirty) {
    try {
      state_->rebuild();
    } catch (...) {
      // The journal holds everything; `slr-sweep recover` rebuilds the snapshot.
    }
  }
}

writer writer::create(const std::filesystem::path& path, const journal_job& job, if_exists policy,
                      writer_options options) {
  const auto journal_file = journal_path(path);
  const std::string& fingerprint = job.fingerprint;
  std::string existing;
  if (std::filesystem::exists(journal_file)) {
    const auto contents = read_journal(journal_file);
    for (const auto& e : contents.entries)
      if (const auto* j = std::get_if<journal_job>(&e)) existing = j->fingerprint;
  } else if (std::filesystem::exists(path)) {
    try {
      existing = reader(path).attributes().job_fingerprint;
    } catch (const archive_error&) {
      throw archive_exists_error(path.string() + " exists and is not an slr-sweep archive; refusing to overwrite it");
    }
  }
  if (std::filesystem::exists(journal_file) || std::filesystem::exists(path)) {
    if (existing != fingerprint)
      throw archive_exists_error(path.string() + " already holds a different job (fingerprint " + existing +
                                 ", this job " + fingerprint + "); choose another output or use resume --extend");
    if (policy == if_exists::fail)
      throw archive_exists_error(path.string() + " already exists for this job; use `slr-sweep resume " +
                                 path.string() + "`");
    return open(path, options);
  }
  auto journal = journal_writer::create(journal_file, job);
  auto s = std::make_unique<state>(path, options, std::move(journal));
  s->model.apply(journal_job{job});
  s->rebuild();
  return writer(std::move(s));
}

writer writer::open(const std::filesystem::path& path, writer_options options, const row_check& check) {
  const auto journal_file = journal_path(path);
  std::vector<refused_row> refused;
  bool from_snapshot = false;
  if (!std::filesystem::exists(journal_file)) {
    if (!std::filesystem::exists(path)) throw archive_not_found_error("no archive at " + path.string());
    journal_from_snapshot(path, journal_file, check, refused);
    from_snapshot = true;
  }
  journal_contents contents;
  auto journal = journal_writer::open(journal_file, contents); // refuses a damaged journal, changing nothing
  auto s = std::make_unique<state>(path, options, std::move(journal));
  s->opened.torn_bytes = contents.ignored_bytes;
  s->opened.journal_from_snapshot = from_snapshot;
  std::unordered_set<std::string> fingerprints;
  for (auto& e : contents.entries) {
    if (const auto* j = std::get_if<journal_job>(&e)) fingerprints.insert(j->fingerprint);
    s->apply(std::move(e));
  }
  if (!s->model.has_job())
    throw journal_error(journal_file.string() + " holds no job record; `slr-sweep recover --salvage " + path.string() +
                        "` takes it from the .h5 (or from the job file: add --job JOB.toml)");
  // Rows the .h5 holds but a truncated journal lost are journaled again, never dropped; rows
  // that are not points of the job are reported and left out. The snapshot they make is written
  // first (with the journal length it will reflect), so a failure there appends nothing.
  auto lost = snapshot_rows_missing_from(path, s->model, fingerprints, check);
  for (auto& r : lost.refused) // the rows refused while the journal was written from the .h5 come again
    if (std::none_of(refused.begin(), refused.end(), [&](const refused_row& x) { return x.point_id == r.point_id; }))
      refused.push_back(std::move(r));
  s->opened.refused = std::move(refused);
  s->opened.merge_note = lost.note;
  if (!lost.entries.empty()) {
    std::uint64_t bytes = s->journal.size_bytes();
    for (const auto& e : lost.entries) bytes += encode_record(e).size();
    for (auto& e : lost.entries) s->apply(journal_entry{e});
    write_snapshot(path, s->model.snapshot(bytes));
    for (const auto& e : lost.entries) s->journal.append(e);
    s->journal.sync();
    s->opened.merged_points = lost.points;
    return writer(std::move(s));
  }
  // The snapshot may be stale or missing after a crash; an up-to-date one is left as it is.
  bool current = false;
  try {
    const reader snapshot(path);
    const auto& a = snapshot.attributes();
    // A snapshot written before checksums is rewritten with them (its texts were unverified).
    current = a.checksummed && s->opened.refused.empty() && a.journal_bytes == s->journal.size_bytes() &&
              a.journal_points == s->model.point_records() && a.job_fingerprint == s->model.job().fingerprint;
    if (current) { // a row whose texts fail their checksum makes it stale too
      std::vector<refused_row> damaged;
      (void)snapshot.points(&damaged);
      current = damaged.empty();
    }
  } catch (const archive_error&) {
  }
  if (!current) s->rebuild();
  return writer(std::move(s));
}

const writer::open_report& writer::opened() const noexcept { return state_->opened; }

journal_job read_stored_job(const std::filesystem::path& path) {
  const auto journal_file = journal_path(path);
  if (std::filesystem::exists(journal_file)) {
    const auto contents = read_journal(journal_file);
    const journal_job* last = nullptr;
    for (const auto& e : contents.entries)
      if (const auto* j = std::get_if<journal_job>(&e)) last = j;
    if (last != nullptr) return *last;
  }
  if (!std::filesystem::exists(path)) throw archive_not_found_error("no archive at " + path.string());
  const reader snapshot(path);
  const auto& a = snapshot.attributes();
  return {a.job_text, a.job_fingerprint, "", a.job_name};
}

const std::filesystem::path& writer::path() const noexcept { return state_->path; }
const std::string& writer::job_text() const noexcept { return state_->model.job().text; }
const std::string& writer::job_fingerprint() const noexcept { return state_->model.job().fingerprint; }

const std::unordered_map<std::uint64_t, grid::status>& writer::done() const noexcept { return state_->done; }

std::optional<point_row> writer::find_row(std::uint64_t point_id) const {
  const auto& rows_of = state_->model.row_of();
  const auto it = rows_of.find(point_id);
  if (it == rows_of.end()) return std::nullopt;
  auto row = state_->model.rows()[it->second];
  if (row.value_names.empty()) row.value_names = standard_value_names();
  return row;
}

bool writer::needs_run(std::uint64_t point_id, bool retry_failed, bool retry_not_converged) const {
  const auto it = state_->done.find(point_id);
  if (it == state_->done.end()) return true;
  if (retry_not_converged && it->second == grid::status::not_converged) return true;
  return retry_failed && (it->second == grid::status::failed || it->second == grid::status::timeout);
}

std::uint32_t writer::begin_run(const run_start& start) {
  auto& s = *state_;
  if (s.current_run) throw archive_error("begin_run: run " + std::to_string(*s.current_run) + " has not ended");
  journal_run_begin begin;
  begin.run.run_index = static_cast<std::uint32_t>(s.model.runs().size());
  begin.run.start_unix = unix_now();
  begin.run.ranks = start.ranks;
  begin.run.host = start.host.empty() ? host_name() : start.host;
  begin.run.command = start.command;
  s.journal.append(begin);
  s.journal.sync();
  const auto index = begin.run.run_index;
  s.apply(std::move(begin));
  s.current_run = index;
  s.dirty = true;
  s.maybe_rebuild();
  return index;
}

void writer::record(const point_row& row) { record_batch(std::span<const point_row>(&row, 1)); }

void writer::record_batch(std::span<const point_row> finished) {
  auto& s = *state_;
  if (!s.current_run) throw archive_error("record: no run has begun (call begin_run first)");
  if (finished.empty()) return;
  std::vector<point_row> rows;
  rows.reserve(finished.size());
  for (const auto& f : finished) {
    rows.push_back(f);
    rows.back().run_index = *s.current_run;
    s.journal.append(rows.back());
  }
  s.journal.sync(); // the acknowledgement: durable from here on
  for (auto& row : rows) s.apply(std::move(row));
  s.points_since_rebuild += finished.size();
  s.dirty = true;
  s.maybe_rebuild();
}

void writer::end_run(const std::string& exit_reason) {
  auto& s = *state_;
  if (!s.current_run) throw archive_error("end_run: no run has begun");
  journal_run_end end{*s.current_run, unix_now(), exit_reason};
  s.journal.append(end);
  s.journal.sync();
  s.apply(std::move(end));
  s.current_run.reset();
  s.rebuild();
}

void writer::extend_job(const journal_job& extended) {
  auto& s = *state_;
  journal_job j = extended;
  s.journal.append(j);
  s.journal.sync();
  s.apply(std::move(j));
  s.rebuild();
}

void writer::rebuild_now() { state_->rebuild(); }

double writer::last_rebuild_seconds() const noexcept { return state_->last_rebuild_seconds; }

const std::string& writer::last_rebuild_error() const noexcept { return state_->last_rebuild_error; }

} // namespace slr::archive
