#!/usr/bin/env bash
# Installs the build into a fresh prefix, builds tests/consumer against it with
# find_package(anabranch), and the same solvers the Makefile way (the MPI compiler wrappers
# and pkg-config), runs each C (and Fortran) mini solver on 2 ranks and checks the file is
# the bits the in-tree C solver writes.
#   run.sh BUILD_DIR WORK_DIR MPIEXEC IN_TREE_SOLVER MPICC [MPIF90]
set -euo pipefail
build=$1 work=$2 mpiexec=$3 reference_solver=$4 mpicc=$5 mpif90=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$here" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" -DEXAMPLES="$here/../../examples" >/dev/null
cmake --build "$work/build" >/dev/null
pc=$(dirname "$(find "$work/prefix" -name anabranch.pc)")
[[ "$(PKG_CONFIG_PATH=$pc pkg-config --modversion anabranch)" == "$(grep -m1 '^Version:' "$pc/anabranch.pc" | cut -d' ' -f2)" ]]
mkdir "$work/pkgconfig"
# shellcheck disable=SC2046  # the flags are words
"$mpicc" -o "$work/pkgconfig/mini_solver_c" "$here/../../examples/c/mini_solver.c" $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs anabranch)
if [[ -n $mpif90 && -f $pc/anabranch-fortran.pc ]]; then
  # shellcheck disable=SC2046
  "$mpif90" -o "$work/pkgconfig/mini_solver_f" "$here/../../examples/fortran/mini_solver.f90" \
    $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs anabranch-fortran)
fi
ab="$work/prefix/bin/anabranch"
"$ab" -q generate -n 4000 -o "$work/mesh.slf" >/dev/null
mkdir "$work/parts"
"$ab" -q partition "$work/mesh.slf" --cli "$work/mesh.cli" -n 2 -o "$work/parts" >/dev/null
timeout 120 "$mpiexec" -n 2 "$reference_solver" "$work/parts/mesh.slf" "$work/mesh.slf" "$work/ref.slf" aggregated 2 >/dev/null
solvers=0
for solver in "$work"/build/mini_solver_* "$work"/pkgconfig/mini_solver_*; do
  [[ -x "$solver" ]] || continue
  rm -f "$work/out.slf"
  timeout 120 "$mpiexec" -n 2 "$solver" "$work/parts/mesh.slf" "$work/mesh.slf" "$work/out.slf" aggregated 2 >/dev/null
  cmp "$work/ref.slf" "$work/out.slf"
  how="find_package(anabranch)"
  [[ $solver == "$work"/pkgconfig/* ]] && how="pkg-config"
  echo "consumer: $(basename "$solver") built with $how writes the same bits"
  solvers=$((solvers + 1))
done
(( solvers >= 2 )) || { echo "consumer: a mini solver was not built (find_package and pkg-config)" >&2; exit 1; }
# The multi-block solvers against the installed headers and module: the same bytes from C and Fortran.
printf '1 6 5 4\n2 3 7 2\n3 9 4 1\n' > "$work/blocks.txt"
"$ab" -q balance "$work/blocks.txt" -n 2 --json > "$work/two.json"
for solver in "$work"/build/blocks_solver_*; do
  timeout 120 "$mpiexec" -n 2 "$solver" "$work/two.json" "$work/$(basename "$solver").dat" 2 >/dev/null
done
[[ -s "$work/blocks_solver_c.dat" ]]
if [[ -x "$work/build/blocks_solver_fortran" ]]; then
  cmp "$work/blocks_solver_c.dat" "$work/blocks_solver_fortran.dat"
  echo "consumer: the C and Fortran multi-block solvers write the same bits"
fi
# partel and gretel links for TELEMAC's par_path: installed, and answering as gretel.
for tool in partel gretel; do
  [[ "$(readlink -f "$work/prefix/libexec/anabranch/telemac/$tool")" == "$(readlink -f "$ab")" ]] ||
    { echo "consumer: libexec/anabranch/telemac/$tool is not a link to the installed anabranch" >&2; exit 1; }
done
status=0
printf 'nothing\n' | "$work/prefix/libexec/anabranch/telemac/gretel" 2>"$work/gretel.err" || status=$?
(( status == 1 )) || { echo "consumer: gretel given one answer exited with status $status, not 1 (bad input)" >&2; exit 1; }
grep -q "gretel answers" "$work/gretel.err"
rm -rf "$work"
