#!/usr/bin/env python3
"""A small explicit diffusion on a partitioned mesh, writing its frames through anabranch:
the Python twin of examples/c/mini_solver.c (the same integer arithmetic, so the same bits
whatever the number of ranks, and the same file as the C and Fortran solvers).

    anabranch generate -n 20000 -o mesh.slf
    anabranch partition mesh.slf --cli mesh.cli -n 4 -o parts
    mpiexec -n 4 python3 mini_solver.py parts/mesh.slf mesh.slf result.slf [strategy] [frames]

A restart from frame K of an earlier result, on any number of ranks (as the C solver):
    mpiexec -n 3 python3 mini_solver.py parts3/mesh.slf mesh.slf again.slf aggregated 10 result.slf 5 [read_strategy]
"""
import sys

import numpy as np
from mpi4py import MPI

import anabranch


def main(argv):
    if len(argv) < 4:
        print("usage: mini_solver.py PARTS_BASE GEOMETRY OUTPUT [strategy] [frames] [RESTART_FILE FRAME [read_strategy]]",
              file=sys.stderr)
        return 2
    strategy = argv[4] if len(argv) > 4 else "aggregated"
    frames = int(argv[5]) if len(argv) > 5 else 4
    restart, restart_frame = (argv[6], int(argv[7])) if len(argv) > 7 else (None, 0)
    read_strategy = argv[8] if len(argv) > 8 else "aggregated"
    comm = MPI.COMM_WORLD

    # This rank's part: local elements, KNOLG, coordinates.
    if ".epart." in argv[1]:  # an element -> part file: the part from the global geometry
        part = anabranch.read_part_global(argv[2], argv[1], comm)
    else:
        part = anabranch.read_part(argv[1], comm)
    ikle, knolg, x, y = part.ikle - 1, part.knolg, part.x, part.y
    nloc = len(knolg)
    header = {"geometry": argv[2], "title": "anabranch mini solver: explicit diffusion",
              "variables": [("TEMPERATURE", "K"), ("LAPLACIAN", "K")]}
    npoin = anabranch.read(argv[2]).npoin

    with anabranch.Writer(comm, argv[3], header, knolg, strategy=strategy, local_mesh=(part.ikle, x, y)) as w:
        # Initial condition: a bump in the middle of the bounding box.
        box = np.array([x.min(initial=1e300), (-x).min(initial=1e300), y.min(initial=1e300), (-y).min(initial=1e300)])
        comm.Allreduce(MPI.IN_PLACE, box, op=MPI.MIN)
        x0, y0 = (box[0] - box[1]) / 2, (box[2] - box[3]) / 2
        s = (-box[1] - box[0]) * (-box[1] - box[0]) / 50
        u = (1e6 / (1 + ((x - x0) * (x - x0) + (y - y0) * (y - y0)) / s)).astype(np.int64)

        # Element edges (a, b) in local numbering, and their ends' global numbers.
        a = ikle.reshape(-1)
        b = np.roll(ikle, -1, axis=1).reshape(-1)
        ga, gb = knolg[a] - 1, knolg[b] - 1
        lap = np.zeros(npoin, dtype=np.int64)
        total = np.empty_like(lap)
        if restart:
            # Frames 1..K as they were, then the state of frame K (micro-units, exact
            # through single precision). Every rank reads its own nodes only.
            with anabranch.Reader(comm, restart, knolg, strategy=read_strategy) as r:
                if not 1 <= restart_frame <= r.frames:
                    raise SystemExit(f"mini_solver.py: {restart} has {r.frames} frames, no frame {restart_frame}")
                for f in range(restart_frame):
                    time, values = r.read_frame(f)
                    w.write_frame(time, values)
                u = np.rint(values["TEMPERATURE"] * 1e6).astype(np.int64)
        for f in range(restart_frame, frames):
            # Ten explicit steps between frames: lap(a) = sum over element edges of u(b) - u(a).
            for _ in range(10):
                lap[:] = 0
                np.add.at(lap, ga, u[b] - u[a])
                np.add.at(lap, gb, u[a] - u[b])
                comm.Allreduce(lap, total, op=MPI.SUM)
                u += total[knolg - 1] // 16  # floor division, as the C solver's floor_div16
            values = np.stack([u * 1e-6, total[knolg - 1] * 1e-6])
            w.write_frame(10.0 * (f + 1), values)
    if comm.rank == 0:
        print(f"mini_solver.py: wrote {frames} frames of {npoin} nodes to {argv[3]} ({strategy})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
