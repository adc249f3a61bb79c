# SLR_NATIVE: tune for the build machine (-march=native). Applied to every target, because
# Eigen's fixed-size types change alignment with the instruction set and must agree across
# translation units. Off by default: the portable build is what CI and packages use.
option(SLR_NATIVE "Compile for the build machine's instruction set (-march=native)" OFF)
if(SLR_NATIVE)
  add_compile_options($<$<CXX_COMPILER_ID:GNU,Clang>:-march=native>)
endif()

# Warnings and sanitizers as INTERFACE targets: every slr target links them PRIVATE,
# so consumers of the exported package never inherit our flags.
add_library(slr_warnings INTERFACE)
add_library(slr::warnings ALIAS slr_warnings)
target_compile_options(slr_warnings INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Wunused -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough>)

add_library(slr_sanitize INTERFACE)
add_library(slr::sanitize ALIAS slr_sanitize)
if(SLR_SANITIZE)
  target_compile_options(slr_sanitize INTERFACE -fsanitize=${SLR_SANITIZE} -fno-omit-frame-pointer)
  target_link_options(slr_sanitize INTERFACE -fsanitize=${SLR_SANITIZE})
endif()

# slr_add_module(<name> SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# One static library per module (slr_<name>, alias slr::<name>); the dependency lists are the
# module boundaries of README.md (HDF5 only in archive, MPI only in sched).
function(slr_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(slr_${name} STATIC ${ARG_SOURCES})
  add_library(slr::${name} ALIAS slr_${name})
  target_compile_features(slr_${name} PUBLIC cxx_std_20)
  set_target_properties(slr_${name} PROPERTIES CXX_EXTENSIONS OFF POSITION_INDEPENDENT_CODE ON
    EXPORT_NAME ${name})
  target_include_directories(slr_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>)
  target_link_libraries(slr_${name} PUBLIC ${ARG_PUBLIC_DEPS}
    PRIVATE ${ARG_PRIVATE_DEPS} $<BUILD_INTERFACE:slr::warnings> $<BUILD_INTERFACE:slr::sanitize>)
  set_property(GLOBAL APPEND PROPERTY SLR_MODULE_TARGETS slr_${name})
endfunction()
