# Test helpers.
#
# ab_add_mpi_test(NAME COMMAND cmd args... RANKS 1 2 3 [TIMEOUT s] [NODES 2 3 NODE_RANKS 4])
#   registers NAME.npN for every N, run as `timeout mpiexec -n N cmd args...`, with
#   PROCESSORS set so ctest -j does not oversubscribe more than it must. The environment
#   lets Open MPI run as root and oversubscribe (CI machines have 2 cores); users' commands
#   never need it. A hang fails at TIMEOUT instead of eating the CI budget.
set(AB_TEST_ENV
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
  ANABRANCH_PROGRESS=0)

find_program(AB_TIMEOUT timeout)

# MPICH (and the MPIs built on it) or Open MPI: how nodes are emulated on one machine.
include(CheckSymbolExists)
set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
check_symbol_exists(MPICH_VERSION "mpi.h" AB_MPI_IS_MPICH)
unset(CMAKE_REQUIRED_INCLUDES)
if(AB_MPI_IS_MPICH)
  # mpi4py's wheel loads the MPI library by its MPICH ABI name, libmpi.so.12; Debian names
  # MPICH's libmpich.so.12: a link in the build tree, for the tests' Python only.
  foreach(lib IN LISTS MPI_C_LIBRARIES)
    if(lib MATCHES "libmpich\\.so")
      get_filename_component(real "${lib}" REALPATH)
      file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/mpich-abi)
      file(CREATE_LINK "${real}" ${PROJECT_BINARY_DIR}/mpich-abi/libmpi.so.12 SYMBOLIC)
      list(APPEND AB_TEST_ENV MPI4PY_MPIABI=mpich "LD_LIBRARY_PATH=${PROJECT_BINARY_DIR}/mpich-abi")
    endif()
  endforeach()
endif()

# The environment that spreads a job's ranks over `nodes` emulated nodes on this machine:
# MPICH's own cliques, or anabranch's test-only knob (ANABRANCH_TEST_NODES, see
# parallel/topology.hpp) for Open MPI, which has none.
function(ab_nodes_env nodes out)
  if(AB_MPI_IS_MPICH)
    set(${out} MPIR_CVAR_NUM_CLIQUES=${nodes} PARENT_SCOPE)
  else()
    set(${out} ANABRANCH_TEST_NODES=${nodes} PARENT_SCOPE)
  endif()
endfunction()

function(ab_add_mpi_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "COMMAND;RANKS;LABELS;NODES;NODE_RANKS" ${ARGN})
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
  # NODES k...: also at each of NODE_RANKS ranks spread over k emulated nodes (NAME.npN.nodesK).
  foreach(k IN LISTS T_NODES)
    ab_nodes_env(${k} nodes_env)
    foreach(n IN LISTS T_NODE_RANKS)
      add_test(NAME ${name}.np${n}.nodes${k}
        COMMAND ${AB_TIMEOUT} -k 5 ${kill_after} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n}
                ${MPIEXEC_PREFLAGS} ${T_COMMAND} ${MPIEXEC_POSTFLAGS})
      set_tests_properties(${name}.np${n}.nodes${k} PROPERTIES
        PROCESSORS ${n} TIMEOUT ${T_TIMEOUT} ENVIRONMENT "${AB_TEST_ENV};${nodes_env}" LABELS "mpi;nodes;${T_LABELS}"
        FAIL_REGULAR_EXPRESSION "MPI_ABORT;HDF5-DIAG;runtime error:;ERROR: AddressSanitizer")
    endforeach()
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
