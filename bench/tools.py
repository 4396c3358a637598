#!/usr/bin/env python3
"""The file tools against their floor: each tool beside a copy of the same bytes.

For each size (MB) a result file is generated (`anabranch generate`, 5 variables, about 10 MB
a frame) and cut into 64 per-rank parts (`anabranch partition`, frames carried). Then, in
turns, each tool and its floor run from the same start:
  merge 64 parts -> one file      floor: cat of the parts into a file
  convert SERAFIN -> SERAFIN      floor: cat of the input into a file
  convert SERAFIN -> HDF5         floor: cat of the input into a file
  split onto 16 parts (a plan)    floor: cat of the input into a file
  info --check                    floor: cat of the input to /dev/null
  diff of a file with a copy      floor: cat of both to /dev/null
Every run ends with `sync` (tool and floor alike). "warm": the inputs in the page cache;
"cold": the page cache dropped before each run (root only; skipped otherwise). The ratio is
the median of the ratios of runs made side by side (--repeat of each). Memory: the tool's
peak VmRSS, sampled from outside every 20 ms (bench/partition.py's sampler), against two
frames of the file plus its mesh. Prints a table and writes JSON.

Usage: bench/tools.py [--sizes 200 2000] [--repeat 5] [--work DIR] [--json OUT] [--quick]
"""
import argparse
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import partition  # noqa: E402  (the RSS sampler and the paths)

AB = partition.AB


def drop_caches():
    subprocess.run(["sync"], check=True)
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def warm(paths):
    for p in paths:
        subprocess.run(f"cat {' '.join(shlex.quote(str(x)) for x in p)} > /dev/null" if isinstance(p, list) else
                       f"cat {shlex.quote(str(p))} > /dev/null", shell=True, check=True)


def timed(shell, clean, cold):
    """Runs `shell && sync` from a clean output folder: (seconds, peak RSS of anabranch)."""
    for c in clean:
        if c.is_dir():
            shutil.rmtree(c)
        elif c.exists():
            c.unlink()
    for c in clean:
        if not c.suffix:
            c.mkdir(parents=True, exist_ok=True)
    if cold:
        drop_caches()
    else:
        subprocess.run(["sync"], check=True)
    m = partition.measure(["sh", "-c", shell + " && sync"], AB)
    return m[0], m[1]


def median(v):
    return sorted(v)[len(v) // 2]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[200, 2000])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--work", default="bench-work")
    p.add_argument("--json")
    p.add_argument("--quick", action="store_true", help="a 4 MB file, one warm run of each (the test suite runs this)")
    a = p.parse_args()
    if a.quick:
        a.sizes, a.repeat = [4], 1
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    can_drop = not a.quick and drop_caches()
    q = shlex.quote
    rows = []
    print(f"{'size':>6} {'tool':<22} {'cache':<5} {'tool s':>8} {'floor s':>8} {'ratio':>6} {'peak RSS':>9} {'2 frames+mesh':>13}")
    for size in a.sizes:
        d = work / f"s{size}"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        src = d / "r.slf"
        npoin_target = 500000 if size >= 50 else 50000
        frames = max(1, round(size * 1e6 / (5 * 4 * npoin_target)))
        subprocess.run([AB, "-q", "generate", "-n", str(2 * npoin_target), "--vars", "5", "--frames", str(frames), "-o", str(src)],
                       check=True, env=partition.ENV)
        info = json.loads(subprocess.run([AB, "-q", "info", str(src), "--json"], check=True, capture_output=True, text=True).stdout)[0]
        npoin, nelem = info["npoin"], info["nelem"]
        two_frames_mesh = 2 * 5 * 4 * npoin + nelem * 12 + npoin * 12
        for n, folder in ((64, "parts"), (16, "plan")):
            subprocess.run([AB, "-q", "partition", str(src), "-n", str(n), "-o", str(d / folder)], check=True, capture_output=True,
                           env=partition.ENV)
        parts = sorted(str(x) for x in (d / "parts").iterdir() if x.name.startswith("r.slf"))
        shutil.copy(src, d / "copy.slf")
        out, splitd = d / "out", d / "split"
        tools = [
            ("merge 64 parts", f"{q(AB)} -q merge {q(str(d / 'parts' / 'r.slf'))} --geo {q(str(src))} -o {q(str(out / 'm.slf'))}",
             f"cat {' '.join(q(x) for x in parts)} > {q(str(out / 'm.slf'))}", [out], [parts]),
            ("convert -> SERAFIN", f"{q(AB)} -q convert {q(str(src))} {q(str(out / 'c.slf'))}",
             f"cat {q(str(src))} > {q(str(out / 'c.slf'))}", [out], [src]),
            ("convert -> HDF5", f"{q(AB)} -q convert {q(str(src))} {q(str(out / 'c.h5'))}",
             f"cat {q(str(src))} > {q(str(out / 'c.h5'))}", [out], [src]),
            ("split onto 16 parts", f"{q(AB)} -q split {q(str(src))} --plan {q(str(d / 'plan' / 'r.slf'))} -o {q(str(splitd))}",
             f"cat {q(str(src))} > {q(str(splitd / 'x'))}", [splitd], [src]),
            ("info --check", f"{q(AB)} -q info --check {q(str(src))}", f"cat {q(str(src))} > /dev/null", [], [src]),
            ("diff with a copy", f"{q(AB)} -q diff {q(str(src))} {q(str(d / 'copy.slf'))}",
             f"cat {q(str(src))} {q(str(d / 'copy.slf'))} > /dev/null", [], [src, d / "copy.slf"]),
        ]
        for name, tool, floor, clean, inputs in tools:
            for cache in (["warm", "cold"] if can_drop and not a.quick else ["warm"]):
                ts, fs, ratios, peak = [], [], [], 0
                for _ in range(a.repeat):
                    if cache == "warm":
                        warm(inputs)
                    f = timed(floor, clean, cache == "cold")[0]
                    if cache == "warm":
                        warm(inputs)
                    t, rss = timed(tool, clean, cache == "cold")
                    ts.append(t)
                    fs.append(f)
                    ratios.append(t / f if f > 0 else float("inf"))
                    peak = max(peak, rss)
                row = dict(size_mb=size, file_bytes=src.stat().st_size, tool=name, cache=cache, tool_seconds=median(ts),
                           floor_seconds=median(fs), ratio=median(ratios), peak_rss_bytes=peak, two_frames_and_mesh_bytes=two_frames_mesh)
                rows.append(row)
                print(f"{size:>6} {name:<22} {cache:<5} {row['tool_seconds']:>8.3f} {row['floor_seconds']:>8.3f} {row['ratio']:>5.2f}x "
                      f"{peak / 2**20:>6.0f} MiB {two_frames_mesh / 2**20:>9.0f} MiB", flush=True)
        shutil.rmtree(d)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
