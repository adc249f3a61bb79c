# Writes OUT, a header defining SLR_BUILD_GIT_REVISION as `git describe --always --dirty` of
# SOURCE_DIR ("unknown" without git or outside a checkout). Run at every build (the target
# slr_git_revision of src/archive/CMakeLists.txt), it rewrites OUT only when the revision changed,
# so an archive records the revision of the code that wrote it, not of the last configure.
set(revision "unknown")
if(GIT_EXECUTABLE)
  execute_process(COMMAND "${GIT_EXECUTABLE}" describe --always --dirty --abbrev=12
    WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE described RESULT_VARIABLE result
    ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(result EQUAL 0 AND described)
    set(revision "${described}")
  endif()
endif()
set(text "#pragma once\n// Generated at build time by cmake/SlrGitRevision.cmake; do not edit.\n#define SLR_BUILD_GIT_REVISION \"${revision}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
