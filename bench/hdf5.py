#!/usr/bin/env python3
"""HDF5 benchmark: the hdf5 strategy (VTKHDF, parallel HDF5) next to the SERAFIN strategies
on the same frames (`anabranch bench`: same generated mesh, Hilbert partition, warm-up,
median of N runs, every file verified by each rank reading its own nodes back), with file
open and close times apart (seed 004: open/close cost); then one run whose variable dataset
is larger than 2 GiB (frames x nodes x 4 bytes), the size SERAFIN cannot hold in one record.

Usage: bench/hdf5.py [--ranks 2 4] [--elements 2000000] [--frames 20] [--repeat 3]
                     [--large-frames 600] [--dir DIR] [--quick]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("ANABRANCH_BUILD", HERE.parent / "build"))
AB = os.environ.get("ANABRANCH", str(BUILD / "src/cli/anabranch"))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1", ANABRANCH_PROGRESS="0")


def bench(ranks, elements, vars_, frames, repeat, strategies, d, tag):
    out = d / f"hdf5-{tag}-{ranks}.json"
    proc = subprocess.run(["timeout", "3600", "mpiexec", "-n", str(ranks), AB, "-q", "bench", "--generate", str(elements),
                           "--vars", str(vars_), "--frames", str(frames), "--repeat", str(repeat), "--dir", str(d),
                           "--strategies", strategies, "-o", str(out)], capture_output=True, text=True, env=ENV)
    if proc.returncode != 0:
        sys.exit(proc.stdout + proc.stderr)
    j = json.loads(out.read_text())
    for r in j["results"]:
        if not r["verified"]:
            sys.exit(f"{r['strategy']}: wrong values")
    return j


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    p.add_argument("--elements", type=int, default=2000000)
    p.add_argument("--vars", type=int, default=4)
    p.add_argument("--frames", type=int, default=20)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--large-frames", type=int, default=600, help="frames of the one-variable run (0: skip it)")
    p.add_argument("--dir", default="bench-work")
    p.add_argument("--quick", action="store_true", help="tiny case, 2 ranks, once (the test suite runs this)")
    a = p.parse_args()
    if a.quick:
        a.ranks, a.elements, a.frames, a.repeat, a.large_frames = [2], 5000, 2, 1, 3
    d = pathlib.Path(a.dir).resolve()
    d.mkdir(parents=True, exist_ok=True)
    print(f"{'ranks':>5} {'strategy':>17} {'open s':>7} {'close s':>8} {'write MB/s':>11} {'to disk MB/s':>13} {'raw disk':>9}")
    for ranks in a.ranks:
        j = bench(ranks, a.elements, a.vars, a.frames, a.repeat, "file-per-process,collective,aggregated,hdf5", d, "cmp")
        for r in j["results"]:
            print(f"{ranks:>5} {r['strategy']:>17} {r['open_median']:>7.3f} {r['close_median']:>8.3f} {r['write_mbs_median']:>11.0f} "
                  f"{r['to_disk_mbs_median']:>13.0f} {j['raw_disk_mbs']:>9.0f}", flush=True)
    if a.large_frames > 0:
        ranks = a.ranks[0]
        j = bench(ranks, a.elements, 1, a.large_frames, 1, "hdf5", d, "large")
        r = j["results"][0]
        npoin = j["config"]["npoin"]
        dataset = npoin * a.large_frames * 4
        print(f"one variable, {a.large_frames} frames of {npoin:,} nodes: a {dataset / 2**30:.2f} GiB dataset "
              f"({'above' if dataset > 2**31 else 'below'} the 2 GiB SERAFIN record limit), {ranks} ranks: "
              f"write {r['write_mbs_median']:.0f} MB/s, to disk {r['to_disk_mbs_median']:.0f} MB/s, verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
