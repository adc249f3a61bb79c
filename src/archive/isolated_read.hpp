#pragma once
// Running a read of untrusted HDF5 data in a child process. The HDF5 file format (the version 0
// superblock and object headers a snapshot uses) carries no checksum on its metadata, and HDF5
// follows what it finds there: a flipped bit in an attribute's variable-length descriptor or in
// a global heap collection is an out-of-bounds read (SIGSEGV) or an allocation of gigabytes
// inside libhdf5, not an error it returns. A read done in a forked child with its address space
// and time capped turns every such failure into an error the caller can report.
#include <functional>
#include <string>

namespace slr::archive {

struct isolated_outcome {
  enum class kind {
    ok,        ///< the read returned
    refused,   ///< it threw archive_not_found_error (a damaged or foreign file, said in message)
    error,     ///< it threw another archive_error (message)
    crashed,   ///< it died by a signal, ran out of its memory budget or time, or threw another
               ///< exception (message says which)
  } result = kind::ok;
  std::string message;
};

/// Runs `read` in a child process (fork; the parent's memory is copied, nothing is shared
/// back) whose address space may grow by at most `memory_budget_bytes` and which is killed after
/// `seconds`. The child writes no file and calls no MPI. Returns how it ended. If the child
/// cannot be started (fork fails), runs nothing and returns ok with message "unchecked: …" so
/// that the caller reads as it did before.
[[nodiscard]] isolated_outcome run_isolated(const std::function<void()>& read, std::size_t memory_budget_bytes,
                                            double seconds);

} // namespace slr::archive
