#include "slr/sweep/archive_job.hpp"

#include <limits>

#include "slr/archive/archive_error.hpp"

namespace slr::sweep {

archive::journal_job journal_job_of(const job::job_spec& job, const std::vector<job::sweep_unit>& units) {
  return {job.text, job::fingerprint(units), job.source_name, job.name};
}

archive::journal_job journal_job_of(const job::job_spec& job) { return journal_job_of(job, job::expand(job)); }

archive::writer create_archive(const std::filesystem::path& path, const job::job_spec& job,
                               archive::writer::if_exists policy, archive::writer_options options) {
  return archive::writer::create(path, journal_job_of(job), policy, options);
}

job::job_spec stored_job(const archive::writer& writer) {
  return job::parse_job(writer.job_text(), writer.path().string() + ":job_text");
}

job::extension_check extend_job(archive::writer& writer, const job::job_spec& extended) {
  // Both jobs passed the caller's point limit already.
  constexpr auto no_limit = std::numeric_limits<std::uint64_t>::max();
  const auto original_units = job::expand(stored_job(writer), no_limit);
  const auto extended_units = job::expand(extended, no_limit);
  const auto check = job::check_extension(original_units, extended_units);
  if (!check.accepted) throw archive::archive_error("cannot extend " + writer.path().string() + ": " + check.reason);
  writer.extend_job(journal_job_of(extended, extended_units));
  return check;
}

} // namespace slr::sweep
