#!/usr/bin/env python3
"""Parallel reader benchmark (a restart's import, as seed 004's FieldIOBenchmarker measured
it): `anabranch bench --read` at several rank counts on a generated channel mesh (Hilbert
partition). Every read strategy reads its file — the shared SERAFIN file (aggregated and
independent, the writer's decomposition and another one), the per-rank files
(file-per-process), the HDF5 file (hdf5, aggregated) — from a dropped page cache (root),
open, read and close timed apart, median of N runs, every value verified; beside plain
pread of the same bytes by every rank (the ceiling). Prints the table and the ratios the
targets name: aggregated against file-per-process, and open + close.

Usage: bench/reader.py [--ranks 2 4 8] [--elements 2000000] [--vars 4] [--frames 20]
                       [--repeat 5] [--dir DIR] [--plot PNG] [--quick]
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


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", type=int, nargs="+", default=[2, 4, 8])
    p.add_argument("--elements", type=int, default=2000000)
    p.add_argument("--vars", type=int, default=4)
    p.add_argument("--frames", type=int, default=20)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--dir", default="bench-work")
    p.add_argument("--plot")
    p.add_argument("--quick", action="store_true", help="tiny case, 2 ranks, once (the test suite runs this)")
    a = p.parse_args()
    if a.quick:
        a.ranks, a.elements, a.frames, a.repeat = [2], 5000, 2, 1
    d = pathlib.Path(a.dir).resolve()
    d.mkdir(parents=True, exist_ok=True)
    files = []
    print(f"{'ranks':>5} {'strategy':>17} {'file':>14} {'decomposition':>14} {'open s':>7} {'close s':>8} {'read MB/s':>10} "
          f"{'/ pread':>8}")
    for ranks in a.ranks:
        out = d / f"read-{ranks}.json"
        subprocess.run(["timeout", "1800", "mpiexec", "-n", str(ranks), AB, "-q", "bench", "--generate", str(a.elements),
                        "--vars", str(a.vars), "--frames", str(a.frames), "--repeat", str(a.repeat), "--strategies",
                        "aggregated", "--read", "--dir", str(d), "-o", str(out)], check=True, capture_output=True, text=True,
                       env=ENV)
        j = json.loads(out.read_text())
        files.append(str(out))
        rd = j["read"]
        raw = rd["raw_read_mbs"]
        for r in rd["results"]:
            if not r["verified"]:
                sys.exit(f"{r['strategy']} on {r['file']}: wrong values")
            print(f"{ranks:>5} {r['strategy']:>17} {r['file']:>14} {r['decomposition']:>14} {r['open_median']:>7.4f} "
                  f"{r['close_median']:>8.4f} {r['read_mbs_median']:>10.0f} {r['read_mbs_median'] / raw:>8.2f}", flush=True)
        agg = next(r for r in rd["results"] if r["strategy"] == "aggregated" and r["file"] == "serafin")
        fpp = next(r for r in rd["results"] if r["strategy"] == "file-per-process")
        print(f"{ranks:>5} plain pread {raw:.0f} MB/s{'' if rd['cache_dropped'] else ' (page cache NOT dropped: not root)'}; "
              f"aggregated / file-per-process {agg['read_mbs_median'] / fpp['read_mbs_median']:.2f}; "
              f"aggregated open + close {1000 * (agg['open_median'] + agg['close_median']):.1f} ms", flush=True)
    if a.plot:
        r = subprocess.run([AB, "bench-plot", *files, "--metric", "read_mbs_median", "-o", a.plot], capture_output=True, text=True)
        print(r.stdout.strip() or r.stderr.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
