#!/usr/bin/env python3
"""merge benchmark: a generated 6.65M-element mesh (3.3M nodes, 4 variables, 10 frames, as
in the gretel figures of the TELEMAC paper's class of machine) split into P per-rank result
files by `anabranch partition`, merged back by `anabranch merge` (one process, then under
mpiexec), against the floor of reading the parts (`cat > /dev/null`) plus writing the
output (`dd`, fdatasync) in the same run. Every timing is the median of 5 (--repeat), each
starting from a synced and (as root) dropped page cache with no previous output in place
(as a user runs it: no old file to free on rename) and ending with sync; the floor and the
merges take turns, and "x floor" is the median of the ratios of runs made side by side. Every merged file is
checked against the original.

Usage: bench/merge.py [--elements N] [--parts 16 64 256] [--ranks 2] [--repeat 5] [--work DIR] [--json OUT] [--quick]
"""
import argparse
import glob
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("ANABRANCH_BUILD", HERE.parent / "build"))
AB = os.environ.get("ANABRANCH", str(BUILD / "src/cli/anabranch"))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1", ANABRANCH_PROGRESS="0")


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            h.update(block)
    return h.hexdigest()


def settle():
    """Same start for every timed command: dirty pages written, page cache dropped (root only)."""
    subprocess.run(["sync"], check=True)
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError:
        pass


def run_once(cmd, outputs):
    """One run from a settled cache without `outputs`, including the final sync: (seconds, stdout)."""
    for o in outputs:
        pathlib.Path(o).unlink(missing_ok=True)
    settle()
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=ENV).stdout
    subprocess.run(["sync"], check=True)
    return time.perf_counter() - t0, out


def median(v):
    return sorted(v)[len(v) // 2]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--elements", type=int, default=6650000)
    p.add_argument("--parts", type=int, nargs="+", default=[16, 64, 256])
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--work", default="bench-work")
    p.add_argument("--json")
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    if a.quick:
        a.elements, a.parts, a.repeat = 20000, [4], 1
    w = pathlib.Path(a.work)
    w.mkdir(parents=True, exist_ok=True)
    mesh = w / "global.slf"
    subprocess.run([AB, "-q", "generate", "-n", str(a.elements), "--vars", "4", "--frames", "10", "-o", str(mesh)], check=True,
                   capture_output=True)
    want = sha(mesh)
    size = mesh.stat().st_size
    rows = []
    print(f"{'P':>5} {'how':>18} {'seconds':>8} {'MB/s out':>9} {'x floor':>8} {'peak RSS':>10}")
    for parts in a.parts:
        d = w / f"p{parts}"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
        subprocess.run([AB, "-q", "partition", str(mesh), "-n", str(parts), "--method", "sfc", "-o", str(d)], check=True,
                       capture_output=True)
        files = sorted(glob.glob(str(d / "global.slf?????-?????")))
        # The floor and the merges take turns, so that each ratio compares runs made under
        # the same disk conditions (they drift by +-30% over minutes on a virtual disk).
        floor_cmd = ["sh", "-c", f'cat "$@" > /dev/null && dd if=/dev/zero of={w / "dd.out"} bs=8M count={max(1, size >> 23)} '
                     'conv=fdatasync 2>/dev/null', "floor", *files]
        merges = (("merge, 1 process", [AB, "merge", str(d / "global.slf"), "--geo", str(mesh), "-o", str(w / "m.slf"), "--json"]),
                  (f"merge, {a.ranks} ranks", ["mpiexec", "-n", str(a.ranks), AB, "merge", str(d / "global.slf"), "--geo",
                                                str(mesh), "-o", str(w / "m.slf"), "--json"]))
        floors, times, ratios, rss = [], {h: [] for h, _ in merges}, {h: [] for h, _ in merges}, {}
        for _ in range(a.repeat):
            floors.append(run_once(floor_cmd, [w / "dd.out"])[0])
            for how, cmd in merges:
                t, out = run_once(cmd, [w / "m.slf"])
                if sha(w / "m.slf") != want:
                    sys.exit(f"{how}: the merged file differs from the original")
                times[how].append(t)
                ratios[how].append(t / floors[-1])
                rss[how] = json.loads(out)["peak_rss_bytes"]
        (w / "dd.out").unlink()
        (w / "m.slf").unlink()
        floor = median(floors)
        rows.append(dict(parts=parts, how="cat parts + dd out", seconds=floor, runs=floors))
        print(f"{parts:>5} {'cat parts + dd out':>18} {floor:>8.2f} {size / floor / 1e6:>9.0f} {1:>8.2f} {'':>10}", flush=True)
        for how, _ in merges:
            t, r = median(times[how]), median(ratios[how])
            rows.append(dict(parts=parts, how=how, seconds=t, runs=times[how], floor_ratio=r, peak_rss_bytes=rss[how]))
            print(f"{parts:>5} {how:>18} {t:>8.2f} {size / t / 1e6:>9.0f} {r:>8.2f} {rss[how] / 2**20:>7.0f} MiB", flush=True)
        shutil.rmtree(d)
    print(f"output: {size / 1e6:.0f} MB; one variable of one frame in double precision: "
          f"{json.loads(subprocess.run([AB, 'info', '--json', str(mesh)], capture_output=True, text=True).stdout)[0]['npoin'] * 8 / 2**20:.0f} MiB")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
