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

With TELEMAC_ROOT (a built TELEMAC: its builds/*/bin/gretel), TELEMAC's gretel beside
`merge` on the issue's case: 64 parts of a 210,000-node result, 4 variables, 10 frames
(40 MB), in turns with `merge` and the cat floor, every run counted (the first included):
how many times faster `merge` is than gretel, and `merge` against the floor; then `merge`
and `cat` again without the final sync (the tools' own time: `merge` writes behind, so its
sync has little left to do, where `cat`'s has the whole file).

Usage: bench/tools.py [--sizes 200 2000] [--repeat 5] [--work DIR] [--json OUT] [--quick]
                      [--gretel-repeat 5]
"""
import argparse
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import time

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


def prepare(clean, cold):
    """A clean output folder; the page cache dropped (cold) or the disk synced (warm)."""
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


def timed(shell, clean, cold, sync=True):
    """Seconds of `shell && sync` (or of `shell` alone) from a clean output folder, nothing
    sampling it: reading a process's /proc files takes its memory map's lock, which slows its
    page faults."""
    prepare(clean, cold)
    t0 = time.perf_counter()
    r = subprocess.run(["sh", "-c", shell + (" && sync" if sync else "")], capture_output=True, text=True, env=partition.ENV)
    secs = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"failed: {shell}\n{r.stderr[-2000:]}")
    return secs


def peak_rss(shell, clean, cold):
    """The peak VmRSS of anabranch in a run of its own, sampled from outside every 20 ms."""
    prepare(clean, cold)
    return max(partition.measure(["sh", "-c", shell + " && sync"], AB)[1].values(), default=0)


def median(v):
    return sorted(v)[len(v) // 2]


def find_gretel():
    root = os.environ.get("TELEMAC_ROOT")
    if not root:
        return None
    found = sorted(pathlib.Path(root).glob("builds/*/bin/gretel"))
    if not found:
        sys.exit(f"tools.py: TELEMAC_ROOT={root} has no builds/*/bin/gretel (build TELEMAC's utils first)")
    return found[0]


def gretel_case(gretel, work, repeat, rows):
    """merge against TELEMAC's gretel on 64 parts of a 40 MB result, every run in turns from a
    synced page cache holding the parts (as right after a run), each ending with sync."""
    q = shlex.quote
    d = work / "gretel"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    src = d / "r.slf"
    subprocess.run([AB, "-q", "generate", "-n", "420000", "--vars", "4", "--frames", "10", "-o", str(src)], check=True,
                   env=partition.ENV)
    subprocess.run([AB, "-q", "partition", str(src), "--cli", str(d / "r.cli"), "-n", "64", "-o", str(d / "parts"),
                    "--names", "T2DRES,T2DCLI"], check=True, capture_output=True, env=partition.ENV)
    parts = sorted(str(x) for x in (d / "parts").glob("T2DRES0*"))
    answers = d / "gretel.par"  # what TELEMAC's runner gives gretel: geometry, format, boundary, result, format, parts, planes, method
    # Named as in a run's folder: gretel reads its answers list-directed, where a '/' ends the line.
    os.link(src, d / "parts" / "T2DGEO")
    os.link(d / "r.cli", d / "parts" / "T2DCLI")
    answers.write_text("T2DGEO\nSERAFIN\nT2DCLI\nT2DRES\nSERAFIN\n64\n0\n1\n")
    merged, by_gretel = d / "m.slf", d / "parts" / "T2DRES"
    runs = {"merge": [], "gretel": [], "floor": [], "merge_nosync": [], "floor_nosync": []}
    commands = {
        "floor": (f"cat {' '.join(q(x) for x in parts)} > {q(str(merged))}", [merged]),
        "merge": (f"{q(AB)} -q merge {q(str(d / 'parts' / 'T2DRES'))} --geo {q(str(src))} --cli {q(str(d / 'r.cli'))} "
                  f"-o {q(str(merged))}", [merged]),
        "gretel": (f"cd {q(str(d / 'parts'))} && rm -f T2DRES && {q(str(gretel))} < {q(str(answers))} > /dev/null", []),
    }
    for _ in range(repeat):
        for name in ("merge", "gretel", "floor"):
            warm([parts])
            runs[name].append(timed(commands[name][0], commands[name][1], False))
        for name in ("merge", "floor"):  # the tool's own time: the same without the final sync
            warm([parts])
            runs[name + "_nosync"].append(timed(commands[name][0], commands[name][1], False, sync=False))
    subprocess.run(["sh", "-c", commands["merge"][0]], check=True)
    r = subprocess.run(["cmp", str(merged), str(by_gretel)], capture_output=True, text=True)
    speedups = [g / m for g, m in zip(runs["gretel"], runs["merge"])]
    over_floor = [m / f for m, f in zip(runs["merge"], runs["floor"])]
    row = dict(size_mb=round(src.stat().st_size / 1e6), tool="merge vs gretel 64 parts", merge_seconds=runs["merge"],
               gretel_seconds=runs["gretel"], floor_seconds=runs["floor"], speedup_every_run=speedups,
               merge_over_floor_every_run=over_floor, merge_without_sync_seconds=runs["merge_nosync"],
               floor_without_sync_seconds=runs["floor_nosync"], same_bytes_as_gretel=r.returncode == 0)
    rows.append(row)
    print(f"gretel: merge {median(runs['merge']):.3f} s, gretel {median(runs['gretel']):.3f} s, cat floor "
          f"{median(runs['floor']):.3f} s; merge faster than gretel by {min(speedups):.1f}x at least (first run "
          f"{speedups[0]:.1f}x, median {median(speedups):.1f}x); merge / floor {median(over_floor):.2f}x (worst "
          f"{max(over_floor):.2f}x); without the final sync: merge {median(runs['merge_nosync']):.3f} s, cat "
          f"{median(runs['floor_nosync']):.3f} s; gretel's bytes: {'yes' if r.returncode == 0 else 'NO: ' + r.stdout.strip()}",
          flush=True)
    shutil.rmtree(d)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[200, 2000])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--work", default="bench-work")
    p.add_argument("--json")
    p.add_argument("--quick", action="store_true", help="a 4 MB file, one warm run of each (the test suite runs this)")
    p.add_argument("--gretel-repeat", type=int, default=5, help="runs of merge, gretel and the floor (with TELEMAC_ROOT)")
    a = p.parse_args()
    if a.quick:
        a.sizes, a.repeat = [4], 1
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    can_drop = not a.quick and drop_caches()
    q = shlex.quote
    rows = []
    gretel = find_gretel()
    if gretel:
        gretel_case(gretel, work, a.gretel_repeat, rows)
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
                ts, fs, ratios = [], [], []
                for _ in range(a.repeat):
                    if cache == "warm":
                        warm(inputs)
                    f = timed(floor, clean, cache == "cold")
                    if cache == "warm":
                        warm(inputs)
                    t = timed(tool, clean, cache == "cold")
                    ts.append(t)
                    fs.append(f)
                    ratios.append(t / f if f > 0 else float("inf"))
                if cache == "warm":
                    warm(inputs)
                peak = peak_rss(tool, clean, cache == "cold")
                row = dict(size_mb=size, file_bytes=src.stat().st_size, tool=name, cache=cache, tool_seconds=median(ts),
                           floor_seconds=median(fs), ratio=median(ratios), tool_runs=ts, floor_runs=fs, peak_rss_bytes=peak, two_frames_and_mesh_bytes=two_frames_mesh)
                rows.append(row)
                print(f"{size:>6} {name:<22} {cache:<5} {row['tool_seconds']:>8.3f} {row['floor_seconds']:>8.3f} {row['ratio']:>5.2f}x "
                      f"{peak / 2**20:>6.0f} MiB {two_frames_mesh / 2**20:>9.0f} MiB", flush=True)
        shutil.rmtree(d)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
