# Test registration in one place (deal.II style): the rank count is part of an MPI test's
# name (name.np3), and PROCESSORS / LABELS / TIMEOUT are always set.
set(SLR_REFERENCE_DIR "${PROJECT_SOURCE_DIR}/tests/reference" CACHE PATH "Reference numbers from independent implementations (tests/reference)")

# MPI tests run as root in CI containers and on machines with fewer cores than ranks.
if(NOT "--oversubscribe" IN_LIST MPIEXEC_PREFLAGS)
  list(APPEND MPIEXEC_PREFLAGS --oversubscribe)
endif()
set(SLR_MPI_TEST_ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
# Script tests that launch mpirun themselves get the launcher and its flags as one string.
string(REPLACE ";" " " slr_mpiexec_preflags_text "${MPIEXEC_PREFLAGS}")

# slr_add_gtest(<name> SOURCES ... [LIBS ...] [LABELS ...] [TIMEOUT s])
function(slr_add_gtest name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main slr::warnings slr::sanitize)
  target_compile_definitions(${name} PRIVATE SLR_REFERENCE_DIR="${SLR_REFERENCE_DIR}")
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES PROCESSORS 1 LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
endfunction()

# slr_add_mpi_test(<name> NP <ranks> COMMAND ... [LABELS ...] [TIMEOUT s])
function(slr_add_mpi_test name)
  cmake_parse_arguments(ARG "" "NP;TIMEOUT" "COMMAND;LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_test(NAME ${name}.np${ARG_NP}
    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ARG_NP} ${MPIEXEC_PREFLAGS} ${ARG_COMMAND} ${MPIEXEC_POSTFLAGS})
  set_tests_properties(${name}.np${ARG_NP} PROPERTIES PROCESSORS ${ARG_NP} LABELS "mpi;${ARG_LABELS}"
    TIMEOUT ${ARG_TIMEOUT} ENVIRONMENT "${SLR_MPI_TEST_ENVIRONMENT}")
endfunction()

# slr_add_script_test(<name> COMMAND ... [LABELS ...] [TIMEOUT s] [PROCESSORS n])
function(slr_add_script_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT;PROCESSORS" "COMMAND;LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  if(NOT ARG_PROCESSORS)
    set(ARG_PROCESSORS 1)
  endif()
  if(NOT ARG_LABELS)
    set(ARG_LABELS integration)
  endif()
  add_test(NAME ${name} COMMAND ${ARG_COMMAND})
  set_tests_properties(${name} PROPERTIES PROCESSORS ${ARG_PROCESSORS} LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT "SLR_SWEEP=$<TARGET_FILE:slr-sweep>;SLR_REFERENCE_DIR=${SLR_REFERENCE_DIR};SLR_MPIEXEC=${MPIEXEC_EXECUTABLE};SLR_MPIEXEC_PREFLAGS=${slr_mpiexec_preflags_text};${SLR_MPI_TEST_ENVIRONMENT}")
endfunction()
