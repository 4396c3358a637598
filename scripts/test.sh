#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds (Release), runs every test; then
# builds the unit tests with ASan+UBSan (clang) and runs them, with a short fuzzing run;
# then checks that the library builds with MPICH too (its tests run on Open MPI only:
# oversubscribed MPICH collective I/O crawls on small machines).
#
# Nothing may be skipped: the TELEMAC data (../shared/data/telemac) must be there and every
# test registered and run (AB_REQUIRE_ALL=1 makes a skipped Python test a failure). On a
# machine without the data, AB_ALLOW_SKIPS=1 runs what can run and prints what was skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
data=${AB_TELEMAC_DATA:-../shared/data/telemac}
if [[ ${AB_ALLOW_SKIPS:-0} != 1 ]]; then
  [[ -f $data/geo_gouttedo.slf && -d $data/telemac-v8 ]] ||
    { echo "test.sh: the TELEMAC data is missing ($data): the full suite needs it (AB_ALLOW_SKIPS=1 to run without)" >&2; exit 1; }
  export AB_REQUIRE_ALL=1
fi
scripts/setup.sh --test

echo "== tests (Release build)"
registered=$(ctest --test-dir build -N)   # read whole: grep -q on a pipe would cut ctest off (pipefail)
for t in unit mpi_writer.np7 cli python_writer.np3 python_install consumer; do
  grep -qE "Test +#[0-9]+: $t\$" <<<"$registered" ||
    { echo "test.sh: the test $t is not registered (a missing dependency or virtual environment)" >&2; exit 1; }
done
ctest --test-dir build --output-on-failure -j 2

echo "== build check with MPICH"
cmake -S . -B build-mpich -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPI_C_COMPILER=mpicc.mpich \
  -DMPI_CXX_COMPILER=mpicxx.mpich -DMPI_Fortran_COMPILER=mpif90.mpich -DANABRANCH_WITH_HDF5=OFF -DANABRANCH_TESTS=OFF >/dev/null
cmake --build build-mpich -j "$(nproc)" >/dev/null
echo "MPICH build: OK"

echo "== unit tests under AddressSanitizer + UndefinedBehaviorSanitizer, and fuzzing"
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DANABRANCH_SANITIZE=ON -DANABRANCH_FUZZ=ON -DAB_TEST_PYTHON= >/dev/null
cmake --build build-asan -j "$(nproc)" --target ab_unit_tests ab_fuzz_serafin ab_fuzz_boundary
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -L sanitize
