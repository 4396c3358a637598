#!/usr/bin/env bash
# Installs the build into a fresh prefix, builds tests/consumer against it with
# find_package(anabranch), runs its C (and Fortran) mini solver on 2 ranks and checks the
# file is the bits the in-tree C solver writes.
#   run.sh BUILD_DIR WORK_DIR MPIEXEC IN_TREE_SOLVER
set -euo pipefail
build=$1 work=$2 mpiexec=$3 reference_solver=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$here" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" -DEXAMPLES="$here/../../examples" >/dev/null
cmake --build "$work/build" >/dev/null
ab="$work/prefix/bin/anabranch"
"$ab" -q generate -n 4000 -o "$work/mesh.slf" >/dev/null
mkdir "$work/parts"
"$ab" -q partition "$work/mesh.slf" --cli "$work/mesh.cli" -n 2 -o "$work/parts" >/dev/null
timeout 120 "$mpiexec" -n 2 "$reference_solver" "$work/parts/mesh.slf" "$work/mesh.slf" "$work/ref.slf" aggregated 2 >/dev/null
solvers=0
for solver in "$work"/build/mini_solver_*; do
  [[ -x "$solver" ]] || continue
  rm -f "$work/out.slf"
  timeout 120 "$mpiexec" -n 2 "$solver" "$work/parts/mesh.slf" "$work/mesh.slf" "$work/out.slf" aggregated 2 >/dev/null
  cmp "$work/ref.slf" "$work/out.slf"
  echo "consumer: $(basename "$solver") built with find_package(anabranch) writes the same bits"
  solvers=$((solvers + 1))
done
(( solvers >= 1 )) || { echo "consumer: no mini solver was built" >&2; exit 1; }
# partel and gretel links for TELEMAC's par_path: installed, and answering as gretel.
for tool in partel gretel; do
  [[ "$(readlink -f "$work/prefix/libexec/anabranch/telemac/$tool")" == "$(readlink -f "$ab")" ]] ||
    { echo "consumer: libexec/anabranch/telemac/$tool is not a link to the installed anabranch" >&2; exit 1; }
done
if printf 'nothing\n' | "$work/prefix/libexec/anabranch/telemac/gretel" 2>"$work/gretel.err"; then
  echo "consumer: gretel accepted one answer" >&2; exit 1
fi
grep -q "gretel answers" "$work/gretel.err"
rm -rf "$work"
