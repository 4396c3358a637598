"""Under mpiexec: anabranch.Writer with an mpi4py communicator, random decompositions with
interface nodes and ranks holding nothing, every strategy, both precisions. The shared
SERAFIN file must be the bytes anabranch.write gives from the global arrays on one process;
the HDF5 file must read back the same values; errors come back as anabranch.Error on every
rank (none hangs)."""
import os
import sys
import tempfile

import numpy as np
from mpi4py import MPI

import anabranch

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
work = comm.bcast(tempfile.mkdtemp(prefix="ab-pywriter-") if rank == 0 else None)
failures = []

mesh_path = os.path.join(work, "mesh.slf")
if rank == 0:
    anabranch.generate(mesh_path, elements=3000)
comm.Barrier()
geo = anabranch.read(mesh_path)
npoin = geo.npoin


def value(g, v, f):
    return ((g * 7919 + v * 104729 + f * 1299709) % 1000003) * 1e-3 - 500.0


for case, (strategy, precision) in enumerate([("aggregated", "single"), ("collective", "double"),
                                               ("aggregated-async", "single"), ("independent", "double"),
                                               ("hdf5", "single"), ("hdf5", "double")]):
    rng = np.random.default_rng(case)
    owner = rng.integers(0, max(1, size - 1) if size > 2 else size, npoin)  # the last rank of 3+ holds nothing of its own
    mine = np.flatnonzero(owner == rank)
    extra = np.flatnonzero(rng.random(npoin) < 0.1)  # interface nodes: held by every rank in addition
    ids = np.unique(np.concatenate([mine, extra if size > 1 else []]).astype(np.int64))
    rng.shuffle(ids)
    knolg = (ids + 1).astype(np.int32)
    ext = ".h5" if strategy == "hdf5" else ".slf"
    out = os.path.join(work, f"case{case}{ext}")
    header = {"geometry": mesh_path, "title": "python writer check", "variables": [("A", "M"), ("B", "M/S")],
              "precision": precision, "date": [2025, 6, 7, 8, 9, 10]}
    dtype = np.float32 if precision == "single" else np.float64
    with anabranch.Writer(comm, out, header, knolg, strategy=strategy) as w:
        for f in range(3):
            vals = {n: np.array([value(g, v, f) for g in ids], dtype=dtype) for v, n in enumerate(["A", "B"])}
            if strategy == "aggregated-async":
                w.begin_frame(f * 0.5, vals)
                w.end_frame()
            else:
                w.write_frame(f * 0.5, vals)
    if rank == 0:
        frames = [(f * 0.5, {n: np.array([value(g, v, f) for g in range(npoin)], dtype=dtype) for v, n in enumerate(["A", "B"])})
                  for f in range(3)]
        ref = os.path.join(work, f"ref{case}.slf")
        anabranch.write(ref, geo.mesh, header["variables"], frames, title=header["title"], precision=precision,
                        date=header["date"], iparam=geo.header["iparam"])
        if strategy == "hdf5":
            back = anabranch.read(out)
            for f in range(3):
                for n in ("A", "B"):
                    if not np.array_equal(back.frames[f][n], frames[f][1][n]):
                        failures.append(f"case {case}: {n} of frame {f} differs")
            if not np.array_equal(back.mesh.ikle, geo.mesh.ikle):
                failures.append(f"case {case}: connectivity differs")
        elif open(out, "rb").read() != open(ref, "rb").read():
            failures.append(f"case {case} ({strategy}, {precision}): the shared file differs from anabranch.write's")

# A node nobody holds: every rank gets the same anabranch.UsageError.
try:
    anabranch.Writer(comm, os.path.join(work, "bad.slf"), {"geometry": mesh_path, "variables": ["A"]},
                     np.arange(2, npoin + 1, dtype=np.int32) if rank == 0 else np.zeros(0, dtype=np.int32))
    failures.append("no error for a node nobody holds")
except anabranch.UsageError as e:
    if "global node 1 is held by no rank" not in str(e):
        failures.append(f"unexpected message: {e}")

all_failures = comm.gather(failures)
if rank == 0:
    import shutil
    shutil.rmtree(work)
    flat = [f for fs in all_failures for f in fs]
    print("\n".join(flat) if flat else f"python writer check: 6 cases + 1 error case passed at {size} ranks")
    sys.exit(1 if flat else 0)
