#!/usr/bin/env bash
# The main job on a built-in example, the whole chain: generate a mesh, partition it as
# TELEMAC's partel would, run a small parallel solver that writes ONE shared result file
# from all ranks (and, for comparison, one file per rank as TELEMAC does today), merge the
# per-rank files as gretel would, check both routes give the same bytes, convert the result
# to HDF5 for ParaView (VTKHDF + XDMF, with provenance), and summarise.
# Output in demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ab=build/src/cli/anabranch
solver=build/examples/mini_solver
# One rank a core (at least 2): more ranks than cores would time the cores' sharing, not the I/O.
ranks=${RANKS:-$(($(nproc) > 2 ? $(nproc) : 2))}
if [[ $(id -u) == 0 ]]; then  # Open MPI refuses root unless told; this machine has few cores
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
rm -rf demo && mkdir -p demo/parts
now() { date +%s.%N; }
t() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }

echo "== 1. generate: a 400,000-triangle channel mesh with its boundary file"
$ab generate -n 400000 -o demo/mesh.slf
echo "== 2. partition into $ranks parts (METIS, TELEMAC's layout: GEO + CLI + PAR per part)"
$ab partition demo/mesh.slf --cli demo/mesh.cli -n "$ranks" -o demo/parts | sed 's/^/   /'
# The solver prints the seconds its ranks spent in the writer (the slowest rank's open, frames
# and close): each route's I/O, apart from the solve and MPI's start.
io() { sed -n 's/.*: \([0-9.]*\) s in the writer.*/\1/p' "$1"; }
echo "== 3. a parallel run on $ranks ranks writing one shared file (aggregated strategy)"
mpiexec -n "$ranks" $solver demo/parts/mesh.slf demo/mesh.slf demo/result.slf aggregated 10 | tee demo/shared.log
echo "== 4. the same run writing one file per rank, as TELEMAC does today"
mpiexec -n "$ranks" $solver demo/parts/mesh.slf demo/mesh.slf demo/T2DRES file-per-process 10 | tee demo/per-rank.log
echo "== 5. merge the per-rank files into one (gretel's job)"
t2=$(now); $ab merge demo/T2DRES --geo demo/mesh.slf -o demo/merged.slf; t3=$(now)
echo "== 6. convert the result for ParaView: HDF5 (VTKHDF + XDMF sidecar), and back"
t4=$(now); $ab convert demo/result.slf demo/result.hdf | sed 's/^/   /'; t5=$(now)
$ab -q convert demo/result.hdf demo/back.slf >/dev/null
echo "== 7. check and summarise"
cmp demo/result.slf demo/merged.slf && echo "   the shared file and the merged per-rank files are the same bytes"
cmp demo/result.slf demo/back.slf && echo "   SERAFIN -> HDF5 -> SERAFIN gives the same bytes"
$ab info demo/result.slf | sed 's/^/   /'
mb() { python3 -c "import os, sys; print(f'{sum(os.path.getsize(f) for f in sys.argv[1:]) / 1e6:.1f} MB')" "$@"; }
shared=$(io demo/shared.log) per=$(io demo/per-rank.log) merge=$(t "$t2" "$t3")
both=$(python3 -c "import sys; print(f'{float(sys.argv[1]) + float(sys.argv[2]):.2f}')" "$per" "$merge")
echo "   one shared file: 1 file, $(mb demo/result.slf), $shared s in the writer"
echo "   a file per rank: $ranks files, $(mb demo/T2DRES?????-?????), $per s in the writer; then the merge: 1 file more, $(mb demo/merged.slf), $merge s; in all $((ranks + 1)) files, $(mb demo/T2DRES?????-????? demo/merged.slf), $both s"
if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)" "$shared" "$both"; then
  echo "   the shared file is the slower here: on one machine with $(nproc) cores, every rank's own file goes to the page"
  echo "   cache at once, while the shared file's values are gathered to the node's writer first. What it saves, a file a"
  echo "   rank and a merge that reads and writes the whole result again, grows with the ranks and the nodes (docs/benchmarks.md)."
fi
echo "   HDF5 for ParaView: demo/result.hdf (+ demo/result.hdf.xmf) in $(t "$t4" "$t5") s"
echo "== done: files in demo/"
