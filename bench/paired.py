#!/usr/bin/env python3
"""Before and after, side by side: the same benchmark from two builds (this tree's and a
baseline's, e.g. a worktree of an older commit built with `cmake --build B --target
anabranch_cli bench_blocks`), run in turn (A B A B ...) so that the machine's drift between
runs falls on both alike; per variant the paired ratio new / baseline of every pair, and its
median and spread.

  writer  `anabranch bench` (a generated channel, Hilbert partition): write MB/s per strategy
  reader  `anabranch bench --read`: read MB/s per read strategy, beside plain pread
  blocks  bench_blocks: write MB/s per block-file strategy (seconds to write the frames)
  block-reads  bench_blocks: read MB/s of a raw block file (written once) per read strategy,
          beside plain pread of the same bytes, page cache dropped before each run (as root)

Usage: bench/paired.py --baseline BUILD [--build BUILD] [--ranks 2] [--repeat 5]
                       [--elements 1000000] [--frame-bytes 2e8] [--dir DIR] [writer reader blocks]
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from blocks import drop_caches  # noqa: E402
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1", ANABRANCH_PROGRESS="0")
WRITE = ["independent", "collective", "aggregated", "aggregated-async"]
BLOCKS = ["raw-independent", "raw-collective", "raw-aggregated", "raw-aggregated-async", "hdf5"]


def run(cmd, may_fail=False):
    r = subprocess.run(["timeout", "1800", *map(str, cmd)], capture_output=True, text=True, env=ENV)
    if r.returncode != 0 and may_fail:
        return None
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))}: exit {r.returncode}\n{r.stderr[-2000:]}")
    return r.stdout


def mesh_rates(build, a, d, read):
    """{strategy: MB/s} of one `anabranch bench` run."""
    cmd = ["mpiexec", "-n", a.ranks, pathlib.Path(build) / "src/cli/anabranch", "-q", "bench", "--generate", a.elements,
           "--frames", a.frames, "--repeat", 1, "--dir", d, "--json", "--strategies", ",".join(WRITE)]
    j = json.loads(run(cmd + (["--read"] if read else [])))
    if not all(r["verified"] for r in j["results"]):
        sys.exit(f"{build}: a strategy wrote wrong bytes")
    if not read:
        return {r["strategy"]: r["write_mbs_median"] for r in j["results"]}
    out = {f"{r['strategy']} ({r['decomposition']})": r["read_mbs_median"] for r in j["read"]["results"]}
    out["pread"] = j["read"]["raw_read_mbs"]
    return out


def block_rates(build, a, d):
    out = {}
    for v in BLOCKS:
        for f in d.glob("w-*"):
            f.unlink()
        subprocess.run(["sync"], check=True)  # the last variant's bytes on disk: its write-back is not this one's
        text = run(["mpiexec", "-n", a.ranks, pathlib.Path(build) / "bench/bench_blocks", v, d, "--blocks", 64,
                    "--frame-bytes", a.frame_bytes, "--frames", 2], may_fail=True)  # a variant the baseline lacks
        if text:
            j = json.loads(text.strip().splitlines()[-1])
            out[v] = j["bytes"] / j["seconds"] / 1e6
    return out


def block_read_rates(build, a, d):
    args = ["--blocks", 64, "--frame-bytes", a.frame_bytes, "--frames", 2]
    if not (d / "blocks.dat").exists():  # written once, by this tree's build
        run(["mpiexec", "-n", a.ranks, pathlib.Path(a.build) / "bench/bench_blocks", "raw-independent", d, *args])
        for f in ("blocks.dat", "blocks.dat.json"):
            (d / f"w-{f}").rename(d / f)
    out = {}
    for v in ("read-pread", "read-raw-independent", "read-raw-collective"):
        drop_caches()
        j = json.loads(run(["mpiexec", "-n", a.ranks, pathlib.Path(build) / "bench/bench_blocks", v, d, *args]).strip().splitlines()[-1])
        out[v] = j["bytes"] / j["seconds"] / 1e6
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--baseline", required=True, help="the baseline's build folder")
    p.add_argument("--build", default=str(HERE.parent / "build"))
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--elements", type=int, default=1000000)
    p.add_argument("--frames", type=int, default=5)
    p.add_argument("--frame-bytes", type=float, default=2e8)
    p.add_argument("--dir", default="bench-paired")
    p.add_argument("what", nargs="*", default=["writer", "reader", "blocks"])
    a = p.parse_args()
    d = pathlib.Path(a.dir).resolve()
    d.mkdir(parents=True, exist_ok=True)
    for what in a.what:
        measure = {"writer": lambda b: mesh_rates(b, a, d, False), "reader": lambda b: mesh_rates(b, a, d, True),
                   "blocks": lambda b: block_rates(b, a, d), "block-reads": lambda b: block_read_rates(b, a, d)}[what]
        new, old = [], []
        for _ in range(a.repeat):
            new.append(measure(a.build))
            old.append(measure(a.baseline))
        print(f"{what} ({a.ranks} ranks, {a.repeat} pairs): MB/s median new / baseline, paired ratio median [min, max]")
        for v in new[0]:
            if any(v not in o for o in old):
                print(f"  {v:>22} {statistics.median(x[v] for x in new):>8.0f}  (new)")
                continue
            ratios = sorted(n[v] / o[v] for n, o in zip(new, old))
            print(f"  {v:>22} {statistics.median(x[v] for x in new):>8.0f} / {statistics.median(x[v] for x in old):>8.0f}"
                  f"  {statistics.median(ratios):.2f} [{ratios[0]:.2f}, {ratios[-1]:.2f}]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
