#pragma once
// Build provenance stored in every archive: tool version, git revision and compiler captured by
// CMake at configure time, library versions (compile-time, and HDF5's run-time version).
#include <map>
#include <string>

namespace slr::archive {

struct provenance {
  std::string tool_version;   ///< PROJECT_VERSION
  std::string git_revision;   ///< `git describe --always --dirty` at configure time, or "unknown"
  std::string compiler;       ///< e.g. "GNU 12.2.0"
  std::map<std::string, std::string> library_versions; ///< hdf5, boost, eigen, tomlplusplus, …
};

[[nodiscard]] const provenance& build_provenance();

} // namespace slr::archive
