# LBFGS++ (liblbfgspp-dev) is header-only on Eigen and the Debian package ships no CMake config.
# Provides the imported target LBFGSpp::LBFGSpp.
find_path(LBFGSpp_INCLUDE_DIR NAMES LBFGS.h LBFGSpp/Param.h)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LBFGSpp REQUIRED_VARS LBFGSpp_INCLUDE_DIR)
if(LBFGSpp_FOUND AND NOT TARGET LBFGSpp::LBFGSpp)
  add_library(LBFGSpp::LBFGSpp INTERFACE IMPORTED)
  set_target_properties(LBFGSpp::LBFGSpp PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${LBFGSpp_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES Eigen3::Eigen)
endif()
mark_as_advanced(LBFGSpp_INCLUDE_DIR)
