#include "archive_model.hpp"

#include <limits>
#include <variant>

namespace slr::archive {

namespace {
template <class... F>
struct overloaded : F... {
  using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;
} // namespace

const std::vector<std::string>& standard_value_names() {
  static const std::vector<std::string> standard = [] {
    std::vector<std::string> names;
    for (const auto& c : grid::result_columns) names.push_back(archive_column_name(c));
    return names;
  }();
  return standard;
}

void archive_model::apply(journal_entry&& entry) {
  std::visit(overloaded{
                 [&](journal_job&& j) { job_ = std::move(j); },
                 [&](journal_run_begin&& b) {
                   run_row run = std::move(b.run);
                   run.end_unix = std::numeric_limits<double>::quiet_NaN();
                   run.exit_reason = "interrupted"; // until its run_end record is seen
                   run.points_done = 0;
                   if (run.run_index != runs_.size()) run.run_index = static_cast<std::uint32_t>(runs_.size());
                   runs_.push_back(std::move(run));
                 },
                 [&](journal_run_end&& e) {
                   if (e.run_index < runs_.size()) {
                     runs_[e.run_index].end_unix = e.end_unix;
                     runs_[e.run_index].exit_reason = std::move(e.exit_reason);
                   }
                 },
                 [&](point_row&& p) {
                   ++point_records_;
                   // Most rows use the standard columns: store them without the 40 names.
                   if (p.value_names == standard_value_names()) p.value_names.clear();
                   if (p.run_index < runs_.size()) ++runs_[p.run_index].points_done;
                   const auto [it, inserted] = row_of_.emplace(p.point_id, rows_.size());
                   if (inserted) rows_.push_back(std::move(p));
                   else rows_[it->second] = std::move(p); // a retried point: the latest result wins
                 },
             },
             std::move(entry));
}

snapshot_content archive_model::snapshot(std::uint64_t journal_bytes, std::optional<std::uint32_t> running_run) const {
  snapshot_content content;
  content.job_text = job_.text;
  content.job_fingerprint = job_.fingerprint;
  content.job_name = job_.name;
  content.rows.reserve(rows_.size());
  for (const auto& r : rows_) content.rows.push_back(&r);
  sort_rows(content.rows);
  content.runs = runs_;
  if (running_run && *running_run < content.runs.size()) content.runs[*running_run].exit_reason = "running";
  content.journal_bytes = journal_bytes;
  content.journal_points = point_records_;
  return content;
}

} // namespace slr::archive
