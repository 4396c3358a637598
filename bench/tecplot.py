#!/usr/bin/env python3
"""Tecplot benchmark (seed 001: COSA writes .plt serially, "plt is 10x faster than szplt",
"next step to parallelise the tecplot writing"): Z ordered zones of n x n x n points, X, Y, Z
and V variables of F frames (double precision), zone z held by rank z * P / Z, written into
one file by every rank:

- ceiling: plain pwrite of the same bytes, each rank its zones' as one range of a shared file
  (bench_cgns ceiling);
- anabranch: the block writer's .plt (bench_cgns anabranch FILE.plt, frames=F: the header's
  room; its default strategy, independent);
- TecIO, Tecplot's own library, when built outside the repository (--tecio PREFIX or
  TECIO_PREFIX: lib/libtecio.a, lib/libteciompi.a, include/TECIO.h; its licence keeps it out):
  serial .plt and .szplt from one process, TecIO-MPI's .szplt from the P ranks
  (bench/tecio_bench.cpp, compiled here); their rows are left out, and the script says so,
  when none is given.

Then each file read back on another rank count, from a dropped page cache (root), every value
checked: plain pread of each rank's bytes (the ceiling), anabranch's block reader on its own
.plt and on TecIO's .plt. Each variant is its own process group; its time the median of
--repeat runs (write: to disk, with fdatasync), its memory the largest process's peak VmRSS
sampled from outside every 20 ms. Prints the table, the ratios the targets name and the
file's bytes beyond its arrays per zone.

Usage: bench/tecplot.py [--zones 64 512 4096 32768] [--points 8] [--vars 5] [--frames 1]
                        [--ranks 2] [--read-ranks 3] [--repeat 3] [--tecio PREFIX]
                        [--tecio-timeout 1800] [--dir DIR] [--json FILE] [--quick]
       bench/tecplot.py --zones 256 --points 64   (the large zones' case: 4.3 GB)
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from cgns import EXE, drop_caches, measure, parsed_case, zones_case  # noqa: E402  (the same runner and sampler)


def build_tecio(prefix, folder):
    """bench/tecio_bench.cpp built against TecIO at prefix: (serial, MPI) executables, or None."""
    if not prefix:
        return None
    inc, lib = pathlib.Path(prefix) / "include", pathlib.Path(prefix) / "lib"
    if not (inc / "TECIO.h").exists() or not (lib / "libtecio.a").exists():
        sys.exit(f"--tecio {prefix}: no include/TECIO.h and lib/libtecio.a there (a TecIO build's files)")
    serial, mpi = folder / "tecio_bench", folder / "tecio_mpi_bench"
    subprocess.run(["g++", "-O2", "-std=c++14", f"-I{inc}", str(HERE / "tecio_bench.cpp"), str(lib / "libtecio.a"), "-lpthread",
                    "-o", str(serial)], check=True)
    if (lib / "libteciompi.a").exists():
        subprocess.run(["mpicxx", "-O2", "-std=c++14", "-DTECIOMPI", "-DOMPI_SKIP_MPICXX", f"-I{inc}", str(HERE / "tecio_bench.cpp"),
                        str(lib / "libteciompi.a"), "-lpthread", "-o", str(mpi)], check=True)
    return str(serial), (str(mpi) if mpi.exists() else None)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    zones_case(p)
    p.add_argument("--tecio", default=os.environ.get("TECIO_PREFIX"), help="a TecIO build (its prefix: include/, lib/)")
    p.add_argument("--tecio-timeout", type=float, default=1800, help="seconds before a TecIO run is given up (reported as more)")
    p.add_argument("--dir", default="bench-tecplot")
    a, d = parsed_case(p)
    tecio = build_tecio(a.tecio, d)
    if not tecio:
        print("TecIO: none given (--tecio PREFIX or TECIO_PREFIX, a TecIO build made outside the repository): its rows are left out")
    cold = drop_caches()
    print(f"page cache {'dropped before every read' if cold else 'NOT dropped (not root): reads may come from memory'}")
    rows = []
    files = dict(ceiling=d / "ceiling.dat", anabranch=d / "anabranch.plt", plt=d / "tecio.plt", szplt=d / "tecio.szplt",
                 mpi=d / "tecio-mpi.szplt")

    def run(label, cmd, exe, ranks, target=None, read=False, timeout=3600):
        times, mem = [], 0
        for _ in range(a.repeat):
            if read:
                drop_caches()
            else:
                pathlib.Path(target).unlink(missing_ok=True)
            launcher = ["mpiexec", "-n", ranks] if ranks else []
            got = measure([*launcher, *cmd], exe, timeout)
            if got is None:
                rows.append(dict(variant=label, ranks=ranks, zones=zones, seconds=None, timeout=timeout))
                print(f"  {label:30s} {ranks or 1} ranks: more than {timeout:.0f} s (given up)", flush=True)
                return None
            j, peak = got
            times.append(j["seconds"] if read else j["seconds_to_disk"])
            mem = max(mem, peak)
        s = statistics.median(times)
        row = dict(variant=label, ranks=ranks or 1, zones=zones, points=a.points, bytes=j["bytes"], seconds=s, peak_rss=mem)
        if not read and target:
            row["file_bytes"] = pathlib.Path(target).stat().st_size
        rows.append(row)
        print(f"  {label:30s} {ranks or 1} ranks: {s:8.3f} s {j['bytes'] / s / 1e6:8.0f} MB/s  peak RSS {mem / 2**20:6.0f} MiB", flush=True)
        return s

    size = ["--points", a.points, "--vars", a.vars, "--frames", a.frames]
    for zones in a.zones:
        arrays = zones * a.points ** 3 * 8 * (3 + a.vars * a.frames)
        print(f"{zones} zones of {a.points}^3 points, {a.vars} variables x {a.frames} frames: {arrays / 1e9:.2f} GB of arrays")
        args = ["--zones", zones, *size]
        tecio_args = [zones, a.points, a.vars, a.frames]
        t = {}
        if tecio:  # one process: the writers' counts do not apply
            t["plt"] = run("write TecIO .plt (serial)", [tecio[0], files["plt"], *tecio_args], tecio[0], 0, files["plt"],
                           timeout=a.tecio_timeout)
            t["szplt"] = run("write TecIO .szplt (serial)", [tecio[0], files["szplt"], *tecio_args], tecio[0], 0, files["szplt"],
                             timeout=a.tecio_timeout)
        for w in a.ranks:
            t["ceiling"] = run("write ceiling (pwrite)", [EXE, "ceiling", files["ceiling"], *args], EXE, w, files["ceiling"])
            t["anabranch"] = run("write anabranch .plt", [EXE, "anabranch", files["anabranch"], *args, "--options", f"frames={a.frames}"],
                                 EXE, w, files["anabranch"])
            if tecio and tecio[1] and w > 1:
                t["mpi"] = run("write TecIO-MPI .szplt", [tecio[1], files["mpi"], *tecio_args], tecio[1], w, files["mpi"],
                               timeout=a.tecio_timeout)
            over = (files["anabranch"].stat().st_size - arrays) / zones
            said = f"  .plt write / pwrite: {t['anabranch'] / t['ceiling']:.2f}x;  file beyond its arrays: {over:.0f} bytes a zone"
            for key, name in (("plt", "TecIO .plt"), ("szplt", "TecIO .szplt"), ("mpi", "TecIO-MPI .szplt")):
                if t.get(key):
                    said += f";  {name} / anabranch: {t[key] / t['anabranch']:.1f}x"
            print(said)
            rows.append(dict(variant="file-overhead", ranks=w, zones=zones, bytes_per_zone=over))
        r = a.read_ranks
        t["pread"] = run("read pread", [EXE, "read-pread", files["ceiling"], *args], EXE, r, read=True)
        t["read"] = run("read anabranch .plt", [EXE, "read-anabranch", files["anabranch"], *args], EXE, r, read=True)
        if tecio and files["plt"].exists():
            run("read anabranch, TecIO's .plt", [EXE, "read-anabranch", files["plt"], *args], EXE, r, read=True)
        print(f"  read / pread: .plt {t['pread'] / t['read']:.2f} (1.0 is pread's speed)")
        for f in d.iterdir():
            f.unlink() if f.is_file() and f.suffix != "" else None
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=1) + "\n")
    if a.quick:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
