#!/usr/bin/env python3
"""A solver's I/O under mpiexec, as bench/scale.py measures it: each rank takes its part
straight from the global geometry and an element -> part file (anabranch.read_part_global,
ab_part_open_global underneath), writes FRAMES frames of one variable into one shared file
with STRATEGY, then reads the last frame back as a restart and checks every value. Values
depend on the global node only, so the file is the same bytes at every rank count.
Usage: scale_solver.py GEOMETRY PARTITION OUTPUT STRATEGY FRAMES"""
import sys

import numpy as np
from mpi4py import MPI

import anabranch


def values(knolg, f):
    return ((knolg.astype(np.int64) * 7919 + f * 104729) % 100003).astype(np.float64) * 1e-2


def main():
    geometry, partition, output, strategy, frames = sys.argv[1:6]
    comm = MPI.COMM_WORLD
    part = anabranch.read_part_global(geometry, partition, comm)
    header = {"geometry": geometry, "title": "anabranch scale bench", "variables": [("A", "M")]}
    with anabranch.Writer(comm, output, header, part.knolg, strategy=strategy) as w:
        for f in range(int(frames)):
            w.write_frame(float(f), {"A": values(part.knolg, f)})
    read_strategy = "hdf5" if strategy == "hdf5" else "aggregated"
    with anabranch.Reader(comm, output, part.knolg, strategy=read_strategy) as r:
        _, got = r.read_frame(-1)
    good = np.array_equal(got["A"], values(part.knolg, int(frames) - 1).astype(np.float32).astype(np.float64))
    if not comm.allreduce(good, op=MPI.LAND):
        if comm.rank == 0:
            print("scale_solver: the restart read back other values than were written", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
