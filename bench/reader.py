#!/usr/bin/env python3
"""Parallel reader benchmark (a restart's import, as seed 004's FieldIOBenchmarker measured
it): `anabranch bench --read` at several rank counts on a generated channel mesh (Hilbert
partition). Every read strategy reads its file — the shared SERAFIN file (aggregated and
independent, the writer's decomposition and another one), the per-rank files
(file-per-process), the HDF5 file (hdf5, aggregated) — from a dropped page cache (root),
open, read and close timed apart, median of N runs, every value verified; beside plain
pread of the same bytes by every rank (the ceiling). Prints the table and the ratios the
targets name: aggregated against file-per-process, and open + close.

Then memory per rank, measured from outside: each rank of a Python job takes its part
straight from the global geometry and an element -> part file and reads every frame of the
shared file with anabranch.Reader (aggregated); this script samples every rank's
/proc/PID/status and smaps_rollup meanwhile (RSS, its shared-memory part, and PSS, which
shares a shared page among the ranks that touch it). The same job without the reader — its
own values allocated and filled frame after frame — is the baseline; the difference is what
reading costs. It runs on the file and on one with 4x the frames (memory must not grow with
the file). No kernel peak counter is read or reset.

Usage: bench/reader.py [--ranks 2 4 8] [--elements 2000000] [--vars 4] [--frames 20]
                       [--repeat 5] [--dir DIR] [--plot PNG] [--quick] [--no-memory]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("ANABRANCH_BUILD", HERE.parent / "build"))
AB = os.environ.get("ANABRANCH", str(BUILD / "src/cli/anabranch"))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1", ANABRANCH_PROGRESS="0")
PYTHON = os.environ.get("PYTHON", str(BUILD / "venv/bin/python"))
PYENV = dict(ENV, PYTHONPATH=os.pathsep.join(filter(None, [str(BUILD / "python"), os.environ.get("PYTHONPATH")])))


def rank_job(mode, geometry, partition, result, nvar, frames):
    """One rank of the memory job (run under mpiexec by memory()): its part from the global
    geometry, then every frame read (mode 'read') or only its own values allocated and
    filled frame after frame as reading would (mode 'baseline')."""
    import numpy as np
    import anabranch
    part = anabranch.read_part_global(geometry, partition)
    if mode == "read":
        with anabranch.Reader(None, result, part.knolg) as r:
            for k in range(r.frames):
                _, values = r.read_frame(k)
    else:
        for k in range(frames):
            values = np.empty((nvar, len(part.knolg)))
            values.fill(k)
    time.sleep(0.3)  # samples after the last frame


def sample(tag, peaks, stop):
    """Every 20 ms until stop is set: RSS, its shared-memory part and PSS of every rank
    process (python reader.py tag ...); the largest of each per process into peaks."""
    while not stop.is_set():
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                args = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
                if args[1:3] != [__file__, tag]:
                    continue
                st = {k: int(v.split()[0]) * 1024 for k, v in (l.split(":", 1) for l in
                      pathlib.Path(f"/proc/{pid}/status").read_text().splitlines() if l.startswith(("VmRSS", "RssShmem")))}
                pss = next(int(l.split()[1]) * 1024 for l in pathlib.Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
                           if l.startswith("Pss:"))
            except (OSError, StopIteration, ValueError):
                continue
            p = peaks.setdefault(pid, dict(rss=0, shmem=0, pss=0))
            p["rss"], p["shmem"], p["pss"] = max(p["rss"], st.get("VmRSS", 0)), max(p["shmem"], st.get("RssShmem", 0)), max(p["pss"], pss)
        stop.wait(0.02)


def memory(ranks, d, a):
    """Peak memory per rank of reading every frame, against the baseline; on the file and on
    one with 4x the frames. Returns rows for the JSON."""
    rows = []
    if not (BUILD / "python/anabranch").is_dir():
        print(f"{ranks:>5} memory: not measured (no Python package in {BUILD}/python)", flush=True)
        return rows
    mesh = d / "memory.slf"
    subprocess.run([AB, "-q", "generate", "-o", str(mesh), "-n", str(a.elements), "--frames", "0"], check=True, env=ENV,
                   stdout=subprocess.DEVNULL)
    subprocess.run([AB, "-q", "partition", str(mesh), "-n", str(ranks), "--layout", "partition-file", "--output", str(d)],
                   check=True, env=ENV, stdout=subprocess.DEVNULL)
    epart = d / f"memory.slf.epart.{ranks}"
    for frames in (a.frames, 4 * a.frames):
        result = d / f"memory-{frames}.slf"
        if not result.exists():
            subprocess.run([AB, "-q", "generate", "-o", str(result), "-n", str(a.elements), "--frames", str(frames),
                            "--vars", str(a.vars)], check=True, env=ENV, stdout=subprocess.DEVNULL)
        size = result.stat().st_size
        peak = {}
        for mode in ("baseline", "read"):
            tag = f"rank-job={mode}:{result}"
            peaks, stop = {}, threading.Event()
            t = threading.Thread(target=sample, args=(tag, peaks, stop))
            t.start()
            r = subprocess.run(["timeout", "600", "mpiexec", "-n", str(ranks), PYTHON, __file__, tag, str(mesh), str(epart),
                                str(result), str(a.vars), str(frames)], env=PYENV, capture_output=True, text=True)
            stop.set()
            t.join()
            if r.returncode != 0 or len(peaks) != ranks:
                sys.exit(f"memory job ({mode}, {ranks} ranks) failed or was not sampled:\n{r.stderr[-2000:]}")
            peak[mode] = sorted(peaks.values(), key=lambda p: p["pss"])
        extra = [dict(rss=r["rss"] - b["rss"], pss=r["pss"] - b["pss"], shmem=r["shmem"]) for b, r in zip(peak["baseline"], peak["read"])]
        row = dict(ranks=ranks, frames=frames, file_bytes=size, baseline=peak["baseline"], read=peak["read"],
                   reader_rss_bytes_max=max(e["rss"] for e in extra), reader_pss_bytes_max=max(e["pss"] for e in extra),
                   shmem_bytes_max=max(e["shmem"] for e in extra))
        rows.append(row)
        print(f"{ranks:>5} memory: file {size / 2**20:.0f} MiB ({frames} frames); per rank peak RSS baseline "
              f"{max(p['rss'] for p in peak['baseline']) / 2**20:.0f} MiB, reading {max(p['rss'] for p in peak['read']) / 2**20:.0f} MiB; "
              f"reading adds at most {row['reader_rss_bytes_max'] / 2**20:.1f} MiB RSS ({row['shmem_bytes_max'] / 2**20:.1f} MiB of it "
              f"shared memory), {row['reader_pss_bytes_max'] / 2**20:.1f} MiB PSS", flush=True)
    return rows


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
    p.add_argument("--no-memory", action="store_true", help="skip the memory measurement")
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
        if not a.no_memory:
            mem = memory(ranks, d, a)
            if mem and mem[1]["reader_pss_bytes_max"] > mem[0]["reader_pss_bytes_max"] + 8 * 2**20:
                print(f"{ranks:>5} memory: GROWS with the file's size", flush=True)
            out.write_text(json.dumps(dict(j, read=dict(rd, memory=mem)), indent=1))
    if a.plot:
        r = subprocess.run([AB, "bench-plot", *files, "--metric", "read_mbs_median", "-o", a.plot], capture_output=True, text=True)
        print(r.stdout.strip() or r.stderr.strip())
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1].startswith("rank-job="):
        mode = sys.argv[1].split("=", 1)[1].split(":", 1)[0]
        sys.exit(rank_job(mode, *sys.argv[2:5], int(sys.argv[5]), int(sys.argv[6])))
    sys.exit(main())
