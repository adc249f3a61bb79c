include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
get_property(slr_modules GLOBAL PROPERTY SLR_MODULE_TARGETS)
install(TARGETS ${slr_modules} slr_core slr-sweep EXPORT slrTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/slr DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT slrTargets NAMESPACE slr:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/slr)
configure_package_config_file(cmake/slrConfig.cmake.in ${PROJECT_BINARY_DIR}/slrConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/slr)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/slrConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/slrConfig.cmake ${PROJECT_BINARY_DIR}/slrConfigVersion.cmake
  cmake/FindRandom123.cmake cmake/FindLBFGSpp.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/slr)
