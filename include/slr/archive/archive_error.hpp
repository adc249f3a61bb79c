#pragma once
// Typed exceptions of the archive module. All derive from archive_error (a std::runtime_error).
#include <stdexcept>
#include <string>

namespace slr::archive {

class archive_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// An HDF5 library call failed; what() names the call, the object and HDF5's own message.
class hdf5_error : public archive_error {
public:
  using archive_error::archive_error;
};

/// The journal could not be read/written (I/O error, bad header, foreign file).
class journal_error : public archive_error {
public:
  using archive_error::archive_error;
};

/// The journal holds damaged records between intact ones (or a corrupt last record): writers
/// refuse it, leaving every byte as it is; `slr-sweep recover --salvage` rebuilds it.
class journal_damaged_error : public journal_error {
public:
  using journal_error::journal_error;
};

/// create() found an archive of a different job (or of the same job when reuse was not allowed).
class archive_exists_error : public archive_error {
public:
  using archive_error::archive_error;
};

/// Another process holds the archive's write lock (a sweep is running on it).
class archive_locked_error : public archive_error {
public:
  using archive_error::archive_error;
};

/// An input given beside an archive does not fit it (e.g. `recover --salvage --job` with another
/// job); nothing was changed.
class input_refused_error : public archive_error {
public:
  using archive_error::archive_error;
};
/// The archive files are missing or not an slr-sweep archive.
class archive_not_found_error : public archive_error {
public:
  using archive_error::archive_error;
};

} // namespace slr::archive
