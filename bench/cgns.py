#!/usr/bin/env python3
"""CGNS benchmark (seed 001's "CGNS write 533 s"; CGNS/CGNS #615's many zones): Z zones of
n x n x n points, their coordinates and V solution variables of F frames (double precision),
zone z held by rank z * P / Z; written into one file by every rank:

- ceiling: plain pwrite of the same bytes, each rank its zones' as one range of a shared file;
- anabranch: the block writer, format CGNS (bench_cgns anabranch FILE.cgns; its default
  strategy, independent), and the same writer's block HDF5 file (.h5) beside it;
- pcgns: CGNS's own parallel library, the way its documentation says (bench/pcgns_bench.c:
  every rank creates every zone, then writes its own zones' arrays), when a CGNS build with
  parallel HDF5 is given (--pcgns PREFIX or PCGNS_PREFIX; it is built outside the
  repository); its rows are left out, and the script says so, when none is.

Then each file read back on another rank count, from a dropped page cache (root), every
value checked: plain pread of each rank's bytes (the ceiling), anabranch's block reader on
its CGNS and HDF5 files and on pcgns's file, pcgns on its file and on anabranch's. Each
variant is its own mpiexec; its time the median of --repeat runs (write: to disk, with
fdatasync), its memory the largest rank's peak VmRSS sampled from outside every 20 ms. Prints
the table, the ratios the targets name and the file's bytes beyond its arrays per zone.

Usage: bench/cgns.py [--zones 64 512 4096 32768] [--points 8] [--vars 5] [--frames 1]
                     [--ranks 2] [--read-ranks 3] [--repeat 3] [--pcgns PREFIX]
                     [--pcgns-timeout 1800] [--dir DIR] [--json FILE] [--quick]
       bench/cgns.py --zones 256 --points 64   (the large zones' case: 4.3 GB)
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("ANABRANCH_BUILD", HERE.parent / "build"))
EXE = str(BUILD / "bench/bench_cgns")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", ANABRANCH_PROGRESS="0")


def measure(cmd, exe, timeout):
    """Runs cmd; returns (its JSON line, the largest peak VmRSS of any process running exe),
    or None when it ran past timeout seconds."""
    peaks, stop = {}, threading.Event()

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
                except (OSError, StopIteration, ValueError, IndexError):
                    continue
                peaks[pid] = max(peaks.get(pid, 0), rss)
            stop.wait(0.02)
    t = threading.Thread(target=sample)
    t.start()
    try:
        r = subprocess.run(["timeout", str(timeout), *map(str, cmd)], capture_output=True, text=True, env=ENV)
    finally:
        stop.set()
        t.join()
    if r.returncode == 124:
        return None
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1]), max(peaks.values(), default=0)


def drop_caches():
    subprocess.run(["sync"], check=True)
    if os.geteuid() == 0:
        try:
            pathlib.Path("/proc/sys/vm/drop_caches").write_text("3\n")
            return True
        except OSError:
            pass
    return False


def build_pcgns(prefix, folder):
    """bench/pcgns_bench.c built against the CGNS library at prefix; its path, or None."""
    if not prefix:
        return None
    inc, lib = pathlib.Path(prefix) / "include", pathlib.Path(prefix) / "lib"
    if not (inc / "pcgnslib.h").exists():
        sys.exit(f"--pcgns {prefix}: no include/pcgnslib.h there (a CGNS build with parallel HDF5 installs it)")
    exe = folder / "pcgns_bench"
    subprocess.run(["mpicc", "-O2", str(HERE / "pcgns_bench.c"), f"-I{inc}", f"-L{lib}", "-lcgns", f"-Wl,-rpath,{lib}",
                    "-o", str(exe)], check=True)
    return str(exe)


def zones_case(p):
    """The zones' case options (shared with bench/tecplot.py)."""
    p.add_argument("--zones", type=int, nargs="+", default=[64, 512, 4096, 32768])
    p.add_argument("--points", type=int, default=8, help="points along each side of a zone")
    p.add_argument("--vars", type=int, default=5)
    p.add_argument("--frames", type=int, default=1)
    p.add_argument("--ranks", type=int, nargs="+", default=[2], help="the writers' rank counts")
    p.add_argument("--read-ranks", type=int, default=3, help="the readers' rank count")
    p.add_argument("--repeat", type=int, default=3)


def parsed_case(p):
    """--json and --quick added, the arguments parsed, the bench built and --dir made: (args, dir)."""
    p.add_argument("--json", help="write every measurement here")
    p.add_argument("--quick", action="store_true", help="a few small zones, once (the suite's check that the bench runs)")
    a = p.parse_args()
    if a.quick:
        a.zones, a.points, a.repeat, a.ranks, a.read_ranks = [16, 64], 4, 1, [1, 2], 3
    if not pathlib.Path(EXE).exists():
        sys.exit(f"{EXE} is not built (cmake --build {BUILD} --target bench_cgns)")
    d = pathlib.Path(a.dir).resolve()
    d.mkdir(parents=True, exist_ok=True)
    return a, d


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    zones_case(p)
    p.add_argument("--pcgns", default=os.environ.get("PCGNS_PREFIX"), help="a CGNS build with parallel HDF5 (its install prefix)")
    p.add_argument("--pcgns-timeout", type=float, default=1800, help="seconds before a pcgns run is given up (reported as more)")
    p.add_argument("--dir", default="bench-cgns")
    a, d = parsed_case(p)
    pcgns = build_pcgns(a.pcgns, d)
    if not pcgns:
        print("pcgns: none given (--pcgns PREFIX or PCGNS_PREFIX, a CGNS build with parallel HDF5): its rows are left out")
    cold = drop_caches()
    print(f"page cache {'dropped before every read' if cold else 'NOT dropped (not root): reads may come from memory'}")
    rows = []
    files = dict(ceiling=d / "ceiling.dat", anabranch=d / "anabranch.cgns", h5=d / "anabranch.h5", pcgns=d / "pcgns.cgns")

    def run(label, cmd, exe, ranks, read=False, timeout=3600):
        times, mem = [], 0
        for _ in range(a.repeat):
            if not read:
                pathlib.Path(cmd[2]).unlink(missing_ok=True)  # FILE: each writer's third word
            else:
                drop_caches()
            got = measure(["mpiexec", "-n", ranks, *cmd], exe, timeout)
            if got is None:
                rows.append(dict(variant=label, ranks=ranks, zones=zones, seconds=None, timeout=timeout))
                print(f"  {label:28s} {ranks} ranks: more than {timeout:.0f} s (given up)", flush=True)
                return None
            j, peak = got
            times.append(j["seconds"] if read else j["seconds_to_disk"])
            mem = max(mem, peak)
        s = statistics.median(times)
        row = dict(variant=label, ranks=ranks, zones=zones, points=a.points, bytes=j["bytes"], seconds=s, peak_rss=mem)
        rows.append(row)
        print(f"  {label:28s} {ranks} ranks: {s:8.3f} s {j['bytes'] / s / 1e6:8.0f} MB/s  peak RSS {mem / 2**20:6.0f} MiB", flush=True)
        return s

    size = ["--points", a.points, "--vars", a.vars, "--frames", a.frames]
    for zones in a.zones:
        arrays = zones * a.points ** 3 * 8 * (3 + a.vars * a.frames)
        print(f"{zones} zones of {a.points}^3 points, {a.vars} variables x {a.frames} frames: {arrays / 1e9:.2f} GB of arrays")
        args = ["--zones", zones, *size]
        for w in a.ranks:
            t = {}
            t["ceiling"] = run("write ceiling (pwrite)", [EXE, "ceiling", files["ceiling"], *args], EXE, w)
            t["anabranch"] = run("write anabranch CGNS", [EXE, "anabranch", files["anabranch"], *args], EXE, w)
            run("write anabranch block .h5", [EXE, "anabranch", files["h5"], *args], EXE, w)
            if pcgns:
                t["pcgns"] = run("write pcgns", [pcgns, "write", files["pcgns"], zones, a.points, a.vars, a.frames], pcgns, w,
                                 timeout=a.pcgns_timeout)
            over = (files["anabranch"].stat().st_size - arrays) / zones
            print(f"  CGNS write / pwrite: {t['anabranch'] / t['ceiling']:.2f}x;  file beyond its arrays: {over:.0f} bytes a zone"
                  + (f";  pcgns / anabranch: {t['pcgns'] / t['anabranch']:.1f}x" if t.get("pcgns") else
                     f";  pcgns more than {a.pcgns_timeout / t['anabranch']:.0f}x" if pcgns else ""))
            rows.append(dict(variant="file-overhead", ranks=w, zones=zones, bytes_per_zone=over))
        r = a.read_ranks
        t = {}
        t["pread"] = run("read pread", [EXE, "read-pread", files["ceiling"], *args], EXE, r, read=True)
        t["cgns"] = run("read anabranch CGNS", [EXE, "read-anabranch", files["anabranch"], *args], EXE, r, read=True)
        t["h5"] = run("read anabranch block .h5", [EXE, "read-anabranch", files["h5"], *args], EXE, r, read=True)
        if pcgns and files["pcgns"].exists():
            run("read anabranch, pcgns's file", [EXE, "read-anabranch", files["pcgns"], *args], EXE, r, read=True)
            run("read pcgns, its file", [pcgns, "read", files["pcgns"], zones, a.points, a.vars, a.frames], pcgns, r, read=True,
                timeout=a.pcgns_timeout)
            run("read pcgns, anabranch's file", [pcgns, "read", files["anabranch"], zones, a.points, a.vars, a.frames], pcgns, r,
                read=True, timeout=a.pcgns_timeout)
        print(f"  read / pread: CGNS {t['pread'] / t['cgns']:.2f}, block .h5 {t['pread'] / t['h5']:.2f} (1.0 is pread's speed)")
        for f in d.iterdir():
            f.unlink() if f.is_file() and f.name != "pcgns_bench" else None
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=1) + "\n")
    if a.quick:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
