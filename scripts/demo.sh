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
ranks=${RANKS:-4}
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
echo "== 3. a parallel run on $ranks ranks writing one shared file (aggregated strategy)"
t0=$(now); mpiexec -n "$ranks" $solver demo/parts/mesh.slf demo/mesh.slf demo/result.slf aggregated 10; t1=$(now)
echo "== 4. the same run writing one file per rank, as TELEMAC does today"
mpiexec -n "$ranks" $solver demo/parts/mesh.slf demo/mesh.slf demo/T2DRES file-per-process 10; t2=$(now)
echo "== 5. merge the per-rank files into one (gretel's job)"
$ab merge demo/T2DRES --geo demo/mesh.slf -o demo/merged.slf; t3=$(now)
echo "== 6. convert the result for ParaView: HDF5 (VTKHDF + XDMF sidecar), and back"
t4=$(now); $ab convert demo/result.slf demo/result.hdf | sed 's/^/   /'; t5=$(now)
$ab -q convert demo/result.hdf demo/back.slf >/dev/null
echo "== 7. check and summarise"
cmp demo/result.slf demo/merged.slf && echo "   the shared file and the merged per-rank files are the same bytes"
cmp demo/result.slf demo/back.slf && echo "   SERAFIN -> HDF5 -> SERAFIN gives the same bytes"
$ab info demo/result.slf | sed 's/^/   /'
echo "   shared file: 1 file in $(t "$t0" "$t1") s; per-rank files: $ranks files in $(t "$t1" "$t2") s, then merge $(t "$t2" "$t3") s"
echo "   HDF5 for ParaView: demo/result.hdf (+ demo/result.hdf.xmf) in $(t "$t4" "$t5") s"
echo "== done: files in demo/"
