#!/usr/bin/env python3
"""Parallel writer benchmark: `anabranch bench` (a synthetic solver loop: F frames of K
variables on a generated channel mesh, Hilbert partition) at several rank counts, every
strategy, median of N runs after a warm-up, with the raw disk rate and the file system's
own rates for a file per rank and for one shared file (plain pwrite, no library: the
shared file's ceiling) measured in the same run, and every file verified; then the table, and the plot (`anabranch bench-plot`, when
matplotlib is there). Also "file-per-process then merge" against the shared file.

Usage: bench/writer.py [--ranks 2 4 8] [--elements 2000000] [--vars 4] [--frames 20]
                       [--repeat 3] [--dir DIR] [--plot PNG] [--quick]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

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
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--dir", default="bench-work")
    p.add_argument("--plot")
    p.add_argument("--quick", action="store_true", help="tiny case, 2 ranks, once (the test suite runs this)")
    a = p.parse_args()
    if a.quick:
        a.ranks, a.elements, a.frames, a.repeat = [2], 5000, 2, 1
    d = pathlib.Path(a.dir).resolve()
    d.mkdir(parents=True, exist_ok=True)
    files = []
    print(f"{'ranks':>5} {'strategy':>17} {'files':>5} {'write MB/s':>11} {'to disk MB/s':>13} {'raw disk':>9}")
    for ranks in a.ranks:
        out = d / f"bench-{ranks}.json"
        subprocess.run(["timeout", "1800", "mpiexec", "-n", str(ranks), AB, "-q", "bench", "--generate", str(a.elements),
                        "--vars", str(a.vars), "--frames", str(a.frames), "--repeat", str(a.repeat), "--dir", str(d),
                        "-o", str(out)], check=True, capture_output=True, text=True, env=ENV)
        j = json.loads(out.read_text())
        files.append(str(out))
        for r in j["results"]:
            if not r["verified"]:
                sys.exit(f"{r['strategy']}: wrong bytes")
            print(f"{ranks:>5} {r['strategy']:>17} {r['files']:>5} {r['write_mbs_median']:>11.0f} {r['to_disk_mbs_median']:>13.0f} "
                  f"{j['raw_disk_mbs']:>9.0f}", flush=True)
        # The file system's own rates (plain pwrite, no library): the ceiling of a shared file
        # against a file per rank.
        own, one = j["raw_own_files"], j["raw_shared_file"]
        fpp = next(r for r in j["results"] if r["strategy"] == "file-per-process")
        agg = next(r for r in j["results"] if r["strategy"] == "aggregated")
        print(f"{ranks:>5} raw pwrite: a file per rank {own['write_mbs']:.0f} MB/s ({own['to_disk_mbs']:.0f} to disk), one shared "
              f"file {one['write_mbs']:.0f} ({one['to_disk_mbs']:.0f}): the shared file's ceiling is "
              f"{100 * one['write_mbs'] / own['write_mbs']:.0f}% ({100 * one['to_disk_mbs'] / own['to_disk_mbs']:.0f}% to disk); "
              f"aggregated / file-per-process: {100 * agg['write_mbs_median'] / fpp['write_mbs_median']:.0f}% "
              f"({100 * agg['to_disk_mbs_median'] / fpp['to_disk_mbs_median']:.0f}% to disk); aggregated / the shared file's "
              f"ceiling: {agg['write_mbs_median'] / one['write_mbs']:.2f} ({agg['to_disk_mbs_median'] / one['to_disk_mbs']:.2f} to disk)")
        # File per process, then merge, against the shared file: the whole way to one file.
        mesh = d / "m.slf"
        subprocess.run([AB, "-q", "generate", "-n", str(a.elements), "--vars", str(a.vars), "--frames", str(a.frames), "-o", str(mesh)],
                       check=True, capture_output=True)
        parts = d / "parts"
        parts.mkdir(exist_ok=True)
        subprocess.run([AB, "-q", "partition", str(mesh), "-n", str(ranks), "--method", "sfc", "-o", str(parts)], check=True,
                       capture_output=True)
        subprocess.run(["sync"], check=True)  # the parts on disk: the timed sync below is the merge's own
        t0 = time.perf_counter()
        subprocess.run([AB, "-q", "merge", str(parts / "m.slf"), "--geo", str(mesh), "-o", str(d / "merged.slf")], check=True,
                       capture_output=True, env=ENV)
        subprocess.run(["sync"], check=True)
        t_merge = time.perf_counter() - t0
        mb = fpp["bytes"] / 1e6
        t_fpp = mb / fpp["to_disk_mbs_median"]
        t_agg = mb / agg["to_disk_mbs_median"]
        print(f"{ranks:>5} file-per-process + merge: {t_fpp:.2f} + {t_merge:.2f} s; shared file (aggregated): {t_agg:.2f} s "
              f"-> {(t_fpp + t_merge) / t_agg:.1f}x")
        for f in [mesh, mesh.with_suffix(".cli"), d / "merged.slf"] + list(parts.iterdir()):
            f.unlink()
    if a.plot:
        r = subprocess.run([AB, "bench-plot", *files, "-o", a.plot], capture_output=True, text=True)
        print(r.stdout.strip() or r.stderr.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
