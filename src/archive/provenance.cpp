#include "slr/archive/provenance.hpp"

#include <hdf5.h>

#include "build_info.hpp"
#include "hdf5_calls.hpp"

namespace slr::archive {

const provenance& build_provenance() {
  static const provenance info = [] {
    provenance p;
    p.tool_version = SLR_BUILD_TOOL_VERSION;
    p.git_revision = SLR_BUILD_GIT_REVISION;
    p.compiler = SLR_BUILD_COMPILER;
    unsigned major = 0, minor = 0, release = 0;
    h5::check(H5get_libversion(&major, &minor, &release), "H5get_libversion", "the HDF5 library");
    p.library_versions["hdf5"] = std::string(SLR_BUILD_VERSION_HDF5) + " (run time " + std::to_string(major) + "." +
                                 std::to_string(minor) + "." + std::to_string(release) + ")";
    p.library_versions["boost"] = SLR_BUILD_VERSION_BOOST;
    p.library_versions["eigen"] = SLR_BUILD_VERSION_EIGEN;
    p.library_versions["tomlplusplus"] = SLR_BUILD_VERSION_TOMLPLUSPLUS;
    p.library_versions["cli11"] = SLR_BUILD_VERSION_CLI11;
    p.library_versions["nlohmann_json"] = SLR_BUILD_VERSION_NLOHMANN_JSON;
    p.library_versions["mpi_standard"] = SLR_BUILD_VERSION_MPI;
    return p;
  }();
  return info;
}

} // namespace slr::archive
