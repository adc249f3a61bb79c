#pragma once
// The job as the archive stores it: its text, the fingerprint of its expansion, where it was
// read from and its name. The archive compares jobs by fingerprint and keeps the text; parsing
// and expanding it again, and deciding whether an extended job may replace it, happen here.
#include <cstdint>
#include <string>
#include <vector>

#include "slr/archive/journal.hpp"
#include "slr/archive/writer.hpp"
#include "slr/job/expansion.hpp"
#include "slr/job/job_file.hpp"

namespace slr::sweep {

/// The journal's job record of `job` (fingerprint of expand(job)).
[[nodiscard]] archive::journal_job journal_job_of(const job::job_spec& job);
/// … with the fingerprint of units already expanded from `job`.
[[nodiscard]] archive::journal_job journal_job_of(const job::job_spec& job, const std::vector<job::sweep_unit>& units);

/// Creates an archive for `job` (archive::writer::create with its journal record).
[[nodiscard]] archive::writer create_archive(const std::filesystem::path& path, const job::job_spec& job,
                                             archive::writer::if_exists policy = archive::writer::if_exists::fail,
                                             archive::writer_options options = {});

/// The job stored in an open archive, parsed again (throws job::job_error if this build cannot
/// parse it, e.g. an unknown method).
[[nodiscard]] job::job_spec stored_job(const archive::writer& writer);

/// The archive::row_check of this build: a row read back from a .h5 is a point of the job when
/// its id is one of the job's expansion (job::expand of the text, parsed again; cached per text)
/// with the same method, repeat and seed, and every parameter cell it shares with that point has
/// the same value (numbers compared as numbers). An accepted row's cells then take the point's
/// types and order, and the point's empty texts that a .h5 cannot keep are restored; cells the
/// point no longer declares (an archive older than a parameter) are kept as they are.
[[nodiscard]] archive::row_check job_row_check();

/// Replaces the archive's job by `extended` if every point and chain of the stored job is
/// unchanged in it (job::check_extension); throws archive::archive_error with the refusal reason
/// otherwise, changing nothing. Returns the accepted check (shared and added point counts).
job::extension_check extend_job(archive::writer& writer, const job::job_spec& extended);

} // namespace slr::sweep
