#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds (Release), runs every test; then
# builds the unit tests with ASan+UBSan (clang) and runs them, with a short fuzzing run;
# then checks that the library builds with MPICH too (its tests run on Open MPI only:
# oversubscribed MPICH collective I/O crawls on small machines).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test

echo "== tests (Release build)"
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
