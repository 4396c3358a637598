#!/usr/bin/env python3
"""Partition ladder: TELEMAC's malpasset mesh refined level by level (`anabranch refine`),
then partitioned into P = ceil(elements / 10,000) parts (the TELEMAC paper's rule) with METIS and
the Hilbert curve, in the per-rank and the concatenated layouts; METIS_PartMeshDual alone on
the same mesh as the floor; and P = 16 vs 4096 on level 4 (memory must not grow with P).
With --ranks R...: the same mesh and P under `mpiexec -n R` for each R (ptscotch and sfc, the
telemac layout), beside the serial METIS and sfc runs.

Every run is timed and its memory sampled from outside (VmRSS of every process of the run
every 20 ms): "peak RSS" is the largest process's (for mpiexec runs the largest rank's),
"all ranks" the sum of every rank's peak; "PSS" the sum of every rank's peak proportional set
size (Pss of /proc/PID/smaps_rollup: a page shared by k processes counts 1/k in each, so the
shared libraries and MPI's shared-memory segments, which every rank's RSS counts whole, count
once); "read" the bytes the largest reader read (rchar of /proc/PID/io, every read call, page
cache included). The last column compares the run with the serial sfc run of the same level:
the largest rank's peak and the ranks' sum over its peak, and the ranks' PSS over its PSS,
then that PSS less what R processes hold on a tiny mesh (the same command on a mesh of a few
thousand elements: MPI's start, the libraries, the binary; about 5 MiB a rank), over the serial
run's: what the ranks hold for the mesh itself; then the time over the serial run's, and the
same less the tiny mesh's time under `mpiexec -n R` (MPI's start and end: 0.3 s at 2 ranks with
Debian's Open MPI 4.1, 0.1 s with OMPI_MCA_pml=^cm, docs/benchmarks.md).
Prints a table and writes JSON.
Usage: bench/partition.py [--levels 3 4 5 6] [--ranks 2 4 8] [--work DIR] [--json OUT] [--quick]
       [--distributed-only]
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("ANABRANCH_BUILD", HERE.parent / "build"))
AB = os.environ.get("ANABRANCH", str(BUILD / "src/cli/anabranch"))
METIS_ALONE = BUILD / "bench/bench_metis_alone"
DATA = pathlib.Path(os.environ.get("AB_TELEMAC_DATA", HERE.parents[1] / "shared/data/telemac"))


ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", ANABRANCH_PROGRESS="0")


def measure(cmd, exe):
    """Runs cmd; returns (seconds, {pid: peak VmRSS}, {pid: bytes read}, stdout, {pid: peak Pss})
    of the processes running exe, sampled from outside every 20 ms; None when the build lacks
    PT-Scotch."""
    peaks, reads, pss, stop = {}, {}, {}, threading.Event()

    def sample():
        while not stop.is_set():
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    if pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode() != exe:
                        continue
                    rss = next(int(line.split()[1]) * 1024 for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines()
                               if line.startswith("VmRSS:"))
                    rchar = next(int(line.split()[1]) for line in pathlib.Path(f"/proc/{pid}/io").read_text().splitlines()
                                 if line.startswith("rchar:"))
                    ps = next(int(line.split()[1]) * 1024
                              for line in pathlib.Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
                              if line.startswith("Pss:"))
                except (OSError, StopIteration, ValueError, IndexError):
                    continue
                peaks[pid] = max(peaks.get(pid, 0), rss)
                reads[pid] = max(reads.get(pid, 0), rchar)
                pss[pid] = max(pss.get(pid, 0), ps)
            stop.wait(0.02)
    t = threading.Thread(target=sample)
    t.start()
    t0 = time.perf_counter()
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=ENV)
    secs = time.perf_counter() - t0
    stop.set()
    t.join()
    if r.returncode != 0:
        if "built without PT-Scotch" in r.stderr:
            return None
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{r.stderr[-2000:]}")
    return secs, peaks, reads, r.stdout, pss


def run_json(*args):
    out = subprocess.run([AB, "-q", *map(str, args), "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--levels", type=int, nargs="+", default=[3, 4, 5])
    p.add_argument("--work", default="bench-work")
    p.add_argument("--json")
    p.add_argument("--quick", action="store_true", help="level 1 only, small P (the test suite runs this)")
    p.add_argument("--ranks", type=int, nargs="*", default=[], help="also run under mpiexec -n R for each R (ptscotch, sfc)")
    p.add_argument("--distributed-only", action="store_true", help="serial sfc as the reference, no METIS or concat runs")
    a = p.parse_args()
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    levels = [1] if a.quick else a.levels
    if (DATA / "geo_malpasset-small.slf").exists():
        base, base_cli = DATA / "geo_malpasset-small.slf", DATA / "geo_malpasset-small.cli"
    else:
        base, base_cli = work / "base.slf", work / "base.cli"
        run_json("generate", "-n", 26000, "-o", base)
    rows = []
    header = (f"{'level':>5} {'elements':>12} {'P':>6} {'method':>12} {'layout':>8} {'ranks':>5} {'seconds':>8} {'peak RSS':>10} "
              f"{'all ranks':>10} {'PSS':>10} {'read':>10} {'edge cut':>10} {'files':>6}  vs serial sfc (largest, all, PSS, PSS less start; time)")
    print(header)
    print("-" * len(header))
    reference = {}
    start = {}  # ranks -> what that many processes of the command hold on a tiny mesh (PSS, summed)

    def start_cost(ranks):
        if ranks not in start:
            tiny = work / "tiny.slf"
            if not tiny.exists():
                run_json("generate", "-n", 4000, "-o", tiny)
            out = work / "tiny-parts"
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            m = measure(["mpiexec", "-n", ranks, AB, "-q", "partition", tiny, "--cli", tiny.with_suffix(".cli"), "-n", ranks,
                         "--method", "sfc", "-o", out], AB)
            start[ranks] = (sum(m[4].values()), m[0])
            shutil.rmtree(out)
        return start[ranks]

    def show(level, nelem, parts, method, layout, secs, peaks, files, ranks=1, cut=None, reads=None, pss=None):
        rss, total = max(peaks.values(), default=0), sum(peaks.values())
        read = max((reads or {}).values(), default=0)
        pss_total = sum((pss or {}).values())
        fixed, fixed_secs = start_cost(ranks) if ranks > 1 else (0, 0.0)
        rows.append(dict(level=level, nelem=nelem, parts=parts, method=method, layout=layout, ranks=ranks, seconds=secs,
                         peak_rss_bytes=rss, peak_rss_bytes_all_ranks=total, peak_rss_bytes_each=sorted(peaks.values()),
                         peak_pss_bytes_all_ranks=pss_total, start_pss_bytes_all_ranks=fixed, start_seconds=fixed_secs,
                         read_bytes_largest=read,
                         edge_cut=cut, files=files))
        if method == "sfc" and ranks == 1 and layout == "telemac":
            reference[level] = (rss, secs, pss_total)
        ref = reference.get(level)
        vs = ""
        if ref and ranks > 1:
            vs = (f"{rss / ref[0]:.2f} {total / ref[0]:.2f} {pss_total / ref[2] if ref[2] else 0:.2f} "
                  f"{(pss_total - fixed) / ref[2] if ref[2] else 0:.2f}, time {secs / ref[1]:.2f} "
                  f"(less start {(secs - fixed_secs) / ref[1]:.2f})")
        cut_s = f"{cut:>10,}" if cut is not None else f"{'-':>10}"
        print(f"{level:>5} {nelem:>12,} {parts:>6} {method:>12} {layout:>8} {ranks:>5} {secs:>8.2f} {rss / 2**20:>6.0f} MiB "
              f"{total / 2**20:>6.0f} MiB {pss_total / 2**20:>6.0f} MiB {read / 2**20:>6.0f} MiB {cut_s} {files:>6}  {vs}",
              flush=True)

    for level in levels:
        mesh = work / f"l{level}.slf"
        r = run_json("refine", base, "--cli", base_cli, "--levels", level, "-o", mesh)
        nelem = r["nelem"]
        parts = 10 if a.quick else max(2, -(-nelem // 10000))  # ceil, as in the TELEMAC paper
        if METIS_ALONE.exists() and not a.distributed_only:
            secs, peaks, _, stdout, pss = measure([METIS_ALONE, mesh, parts], str(METIS_ALONE))
            show(level, nelem, parts, "METIS alone", "-", secs, peaks, 0, pss=pss)
        runs = [(1, "sfc", "telemac")]
        if not a.distributed_only:
            runs = [(1, method, layout) for method in ("metis", "sfc") for layout in ("telemac", "concat")
                    if not (layout == "concat" and method == "sfc" and not a.quick)]
        runs += [(ranks, method, "telemac") for ranks in a.ranks for method in ("sfc", "ptscotch")]
        for ranks, method, layout in runs:
            out = work / "parts"
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            cmd = [AB, "-q", "partition", mesh, "--cli", mesh.with_suffix(".cli"), "-n", parts, "--method", method,
                   "--layout", layout, "-o", out, "--json"]
            if ranks > 1 or method == "ptscotch":
                cmd = ["mpiexec", "-n", ranks] + cmd
            m = measure(cmd, AB)
            if m is None:
                print(f"{level:>5} {method}: this anabranch is built without PT-Scotch", flush=True)
                continue
            secs, peaks, reads, stdout, pss = m
            j = json.loads(stdout)
            show(level, nelem, parts, method, layout, secs, peaks, j["files"], ranks, j.get("edge_cut"), reads, pss)
            shutil.rmtree(out)
        if level == 4 and not a.quick and not a.distributed_only:
            for parts in (16, 4096):
                out = work / "parts"
                out.mkdir(exist_ok=True)
                j = run_json("partition", mesh, "--cli", mesh.with_suffix(".cli"), "-n", parts, "-o", out)
                show(level, nelem, parts, "metis", "telemac", j["seconds"], {"self": j["peak_rss_bytes"]}, j["files"])
                shutil.rmtree(out)
        mesh.unlink()
        mesh.with_suffix(".cli").unlink()
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
