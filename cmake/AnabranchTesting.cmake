# Test helpers.
#
# ab_add_mpi_test(NAME COMMAND cmd args... RANKS 1 2 3 [TIMEOUT s])
#   registers NAME.npN for every N, run as `timeout mpiexec -n N cmd args...`, with
#   PROCESSORS set so ctest -j does not oversubscribe more than it must. The environment
#   lets Open MPI run as root and oversubscribe (CI machines have 2 cores); users' commands
#   never need it. A hang fails at TIMEOUT instead of eating the CI budget.
set(AB_TEST_ENV
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
  ANABRANCH_PROGRESS=0)

find_program(AB_TIMEOUT timeout)

function(ab_add_mpi_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "COMMAND;RANKS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  if(NOT T_RANKS)
    set(T_RANKS 1 2 3)
  endif()
  math(EXPR kill_after "${T_TIMEOUT} - 5")
  foreach(n IN LISTS T_RANKS)
    add_test(NAME ${name}.np${n}
      COMMAND ${AB_TIMEOUT} -k 5 ${kill_after} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n}
              ${MPIEXEC_PREFLAGS} ${T_COMMAND} ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}.np${n} PROPERTIES
      PROCESSORS ${n} TIMEOUT ${T_TIMEOUT} ENVIRONMENT "${AB_TEST_ENV}" LABELS "mpi;${T_LABELS}"
      FAIL_REGULAR_EXPRESSION "MPI_ABORT;HDF5-DIAG;runtime error:;ERROR: AddressSanitizer")
  endforeach()
endfunction()

# ab_add_test(NAME COMMAND cmd args...): a serial test with the same environment and checks.
function(ab_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "COMMAND" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  add_test(NAME ${name} COMMAND ${T_COMMAND})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} ENVIRONMENT "${AB_TEST_ENV}"
    FAIL_REGULAR_EXPRESSION "MPI_ABORT;HDF5-DIAG;runtime error:;ERROR: AddressSanitizer")
endfunction()
