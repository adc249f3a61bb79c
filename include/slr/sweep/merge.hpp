#pragma once
// `slr-sweep merge A.h5 B.h5 … -o C.h5`: one archive from several archives of the same job
// (the shards of `run --shard`, partial or resumed runs, copies from other machines).
//
// Every input is read as `status` reads it — the journal's intact records over the .h5 snapshot,
// the journal alone where the .h5 cannot be read — without a lock and without changing any byte
// of it. An input is refused (archive_error, exit 2, the file and the reason named) when it is
// missing or not an archive, when its journal is damaged (`recover --salvage` first), when a row
// fails its checksum, when a sweep is writing it, when its job has another fingerprint than the
// first input's (the whole job's: every shard of a job carries it), or when a row is not a point
// of the job. A point present in several inputs is kept once, and only if every copy agrees bit
// for bit (parameters, seed, status, message, extra_json and every result but the timings wall_s,
// completed_unix and run_index); otherwise the merge is refused naming the point, the files and
// the first difference.
//
// The output is created like any archive (refused if it or its journal exists): the whole job
// (without a [shard] table), then one run `merge` whose points are journaled with one fsync, then
// the .h5 snapshot. A kill at any instant leaves the inputs untouched and the output absent or a
// valid archive of the job that `resume` completes. Points of the job that no input holds are
// reported; `slr-sweep resume OUTPUT` computes them.
#include <cstdint>
#include <string>
#include <vector>

namespace slr::sweep {

struct merge_arguments {
  std::vector<std::string> inputs; ///< ≥ 1 archives (.h5 paths; the journal beside each is read too)
  std::string output;              ///< the archive to create
};

struct merge_report {
  std::string job_name, fingerprint;
  std::size_t inputs = 0;
  std::size_t points = 0;          ///< distinct points written
  std::size_t duplicates = 0;      ///< copies of a point found in more than one input (all agreeing)
  std::size_t job_points = 0;      ///< points of the whole job
};

/// Merges; throws archive::archive_error / archive_exists_error / archive_not_found_error /
/// std::invalid_argument for every refusal (nothing created then), other exceptions for I/O
/// failures while writing the output.
merge_report merge(const merge_arguments& args);

} // namespace slr::sweep
