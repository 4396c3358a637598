#!/usr/bin/env python3
"""Parallel writer benchmark: a synthetic solver loop (F frames of K variables on a
generated channel mesh, Hilbert partition) at several rank counts, every strategy, median
of N runs; next to the raw disk rate (dd with fdatasync) measured in the same run.
MB/s counts the frame bytes; "to disk" adds close and fdatasync to the write time.

Usage: bench/writer.py [--ranks 2 4 8] [--elements 2000000] [--vars 4] [--frames 20]
                       [--repeat 3] [--dir DIR] [--json OUT] [--quick]
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("ANABRANCH_BUILD", HERE.parent / "build"))
BENCH = BUILD / "bench/bench_writer"
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1")


def disk_rate(directory, mb):
    path = pathlib.Path(directory) / "dd-test"
    t0 = time.perf_counter()
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=8M", f"count={max(1, mb // 8)}", "conv=fdatasync"],
                   check=True, capture_output=True)
    secs = time.perf_counter() - t0
    path.unlink()
    return max(1, mb // 8) * 8 * 2**20 / secs / 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", type=int, nargs="+", default=[2, 4, 8])
    p.add_argument("--elements", type=int, default=2000000)
    p.add_argument("--vars", type=int, default=4)
    p.add_argument("--frames", type=int, default=20)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--dir", default="bench-work")
    p.add_argument("--json")
    p.add_argument("--quick", action="store_true", help="tiny sizes, 2 ranks, once (the test suite runs this)")
    a = p.parse_args()
    if a.quick:
        a.ranks, a.elements, a.frames, a.repeat = [2], 5000, 2, 1
    d = pathlib.Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    results = []
    total_mb = 0
    for ranks in a.ranks:
        runs = {}
        for _ in range(a.repeat):
            out = subprocess.run(["timeout", "600", "mpiexec", "-n", str(ranks), str(BENCH), "--elements", str(a.elements),
                                  "--vars", str(a.vars), "--frames", str(a.frames), "--dir", str(d)],
                                 check=True, capture_output=True, text=True, env=ENV).stdout
            for line in out.splitlines():
                j = json.loads(line)
                if not j["verified"]:
                    sys.exit(f"strategy {j['strategy']} wrote different bytes")
                runs.setdefault(j["strategy"], []).append(j)
        for strategy, js in runs.items():
            frame_mb = js[0]["frame_bytes"] * js[0]["frames"] / 1e6
            total_mb = max(total_mb, int(frame_mb))
            w = statistics.median(j["write"] for j in js)
            full = statistics.median(j["write"] + j["close"] + j["sync"] for j in js)
            opn = statistics.median(j["open"] for j in js)
            results.append(dict(ranks=ranks, strategy=strategy, npoin=js[0]["npoin"], files=js[0]["files"], mb=frame_mb,
                                write_mbs=frame_mb / w, disk_mbs=frame_mb / full, open_s=opn))
    dd = disk_rate(d, max(64, total_mb))
    print(f"raw disk rate (dd, fdatasync, {max(64, total_mb)} MB): {dd:.0f} MB/s")
    print(f"{'ranks':>5} {'strategy':>17} {'nodes':>10} {'files':>5} {'MB':>7} {'write MB/s':>11} {'to disk MB/s':>13} {'open s':>7}")
    for r in results:
        print(f"{r['ranks']:>5} {r['strategy']:>17} {r['npoin']:>10,} {r['files']:>5} {r['mb']:>7.0f} {r['write_mbs']:>11.0f} "
              f"{r['disk_mbs']:>13.0f} {r['open_s']:>7.3f}")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps({"dd_mbs": dd, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
