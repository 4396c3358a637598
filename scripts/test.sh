#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds (Release), runs every test (the
# C++ and Python MPI tests at 1 node and over 2 and 3 emulated nodes, the pytest MPI tests
# over 2, and across two hosts made of network namespaces); then builds
# with MPICH and runs every MPI test there (the pytest tests over 2 emulated nodes, MPICH's
# cliques; the C++ and Python tests at 1, 2 and 3); then builds the unit tests with
# ASan+UBSan (clang) and runs them, with a short fuzzing run. The Release build's tests include
# the documentation site (MkDocs, warnings as errors) and every example in it.
#
# Nothing may be skipped: the TELEMAC data (../shared/data/telemac) must be there and every
# test registered and run (AB_REQUIRE_ALL=1 makes a skipped Python test a failure). On a
# machine without the data, AB_ALLOW_SKIPS=1 runs what can run and prints what was skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
stage() { printf '== %s (at %d:%02d)\n' "$1" $((SECONDS / 60)) $((SECONDS % 60)); }
data=${AB_TELEMAC_DATA:-../shared/data/telemac}
if [[ ${AB_ALLOW_SKIPS:-0} != 1 ]]; then
  [[ -f $data/geo_gouttedo.slf && -d $data/telemac-v8 ]] ||
    { echo "test.sh: the TELEMAC data is missing ($data): the full suite needs it (AB_ALLOW_SKIPS=1 to run without)" >&2; exit 1; }
  export AB_REQUIRE_ALL=1
fi
# The three GCC builds (Release, the wheel built from the sdist, MPICH) compile the same sources:
# a compiler cache in the build tree serves the later builds what the first compiled (paths
# relative to the clone, so the unpacked sdist's objects are the tree's).
export CCACHE_DIR="$PWD/build/ccache" CCACHE_BASEDIR="$PWD" CCACHE_MAXSIZE=2G
export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
scripts/setup.sh --test

stage "tests (Release build)"
registered=$(ctest --test-dir build -N)   # read whole: grep -q on a pipe would cut ctest off (pipefail)
for t in unit mpi_writer.np7 mpi_writer.np4.nodes3 cli cli_gen cli_mpi.nodes2 python_writer.np3 python_install consumer scale.np64 \
         two_hosts docs; do
  grep -qE "Test +#[0-9]+: $t\$" <<<"$registered" ||
    { echo "test.sh: the test $t is not registered (a missing dependency or virtual environment)" >&2; exit 1; }
done
# One test more than the cores: the pytest runs wait on their MPI jobs and the disk.
ctest --test-dir build --output-on-failure -j "$(($(nproc) + 1))"

stage "MPI tests with MPICH"
cmake -S . -B build-mpich -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPI_C_COMPILER=mpicc.mpich \
  -DMPI_CXX_COMPILER=mpicxx.mpich -DMPI_Fortran_COMPILER=mpif90.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich \
  -DHDF5_C_COMPILER_EXECUTABLE=/usr/bin/h5pcc.mpich -DAB_TEST_PYTHON="$PWD/build/venv/bin/python" \
  -DPython_EXECUTABLE="$PWD/build/venv/bin/python" >/dev/null
# What the MPI tests run (not the unit tests nor the benchmarks, which MPI does not change).
# The CFL3D stand-in built with CGNS exists where libcgns-dev does.
cgns_stub=$(cmake --build build-mpich --target help | grep -o '^cfl3d_stub_cgns' || true)
cmake --build build-mpich -j "$(($(nproc) + 2))" --target anabranch_cli anabranch_cgns anabranch_c anabranch_fortran _core \
  mini_solver blocks_solver mini_solver_f blocks_solver_f ab_mpi_smoke ab_mpi_writer ab_mpi_blocks ab_c_status \
  ab_fortran_status ab_writer_crash ab_records_standin ab_records_standin_sub ab_records_standin_m8 ab_records_standin_big \
  cfl3d_stub $cgns_stub >/dev/null
registered=$(ctest --test-dir build-mpich -N -L mpi)
for t in mpi_writer.np3.nodes3 cli_mpi.nodes2 cli_mpi_rest.nodes2 cli_gen_mpi.nodes2 python_writer.np3; do
  grep -qE "Test +#[0-9]+: $t\$" <<<"$registered" ||
    { echo "test.sh: the MPICH test $t is not registered" >&2; exit 1; }
done
ctest --test-dir build-mpich --output-on-failure -j 2 -L mpi

stage "unit tests under AddressSanitizer + UndefinedBehaviorSanitizer, and fuzzing"
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DANABRANCH_SANITIZE=ON -DANABRANCH_FUZZ=ON -DAB_TEST_PYTHON= >/dev/null
cmake --build build-asan -j "$(($(nproc) + 2))" --target ab_unit_tests ab_fuzz_serafin ab_fuzz_boundary
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j "$(($(nproc) + 1))" -L sanitize
stage "done: every test passed"
