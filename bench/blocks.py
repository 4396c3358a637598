#!/usr/bin/env python3
"""Multi-block I/O benchmark (seed 001's case): a grid of blocks of unequal sizes dealt to
the ranks by `balance`, halo layers around every piece, 5 double-precision variables,
frames of about 1 GB, written into one file by every strategy side by side with the file
system's ceiling (plain pwrite of the same bytes) and COSA's two hand-written patterns (one
write per grid line; one write per block and variable); read back as a restart against
plain pread of the same bytes (page cache dropped first when run as root); and at 4,096
small blocks, anabranch's concatenated HDF5 layout against one dataset per block (CGNS's
layout), to write and to open. Each variant runs as its own mpiexec; its time is the
median of --repeat runs, its memory the largest rank's peak VmRSS sampled from outside every
20 ms. The raw files of every write variant must be the same bytes.

Usage: bench/blocks.py [--ranks 2] [--frame-bytes 1e9] [--blocks 256] [--frames 2]
                       [--small-blocks 4096] [--small-frame-bytes 1e8] [--repeat 3] [--dir DIR]
"""
import argparse
import hashlib
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import partition  # noqa: E402  (its sampler of every rank's memory)

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("ANABRANCH_BUILD", HERE.parent / "build"))
EXE = str(BUILD / "bench/bench_blocks")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", ANABRANCH_PROGRESS="0")


def measure(cmd):
    """Runs cmd; returns (its JSON line, the largest peak VmRSS of any bench_blocks process),
    sampled from outside as bench/partition.py samples."""
    _, peaks, _, stdout = partition.measure(cmd, EXE)
    return json.loads(stdout.strip().splitlines()[-1]), max(peaks.values(), default=0)


def drop_caches():
    subprocess.run(["sync"], check=True)
    if os.geteuid() == 0:
        try:
            pathlib.Path("/proc/sys/vm/drop_caches").write_text("3\n")
            return True
        except OSError:
            pass
    return False


def md5(path):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 24), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--frame-bytes", type=float, default=1e9)
    p.add_argument("--blocks", type=int, default=256)
    p.add_argument("--frames", type=int, default=2)
    p.add_argument("--small-blocks", type=int, default=4096)
    p.add_argument("--small-frame-bytes", type=float, default=1e8)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--dir", default="bench-blocks")
    p.add_argument("--json", help="write every measurement here")
    a = p.parse_args()
    d = pathlib.Path(a.dir).resolve()
    d.mkdir(parents=True, exist_ok=True)
    rows = []

    def once(variant, blocks, frame_bytes, cold=False):
        if variant.startswith(("read-", "open-")):
            is_cold = drop_caches() if cold else False
        else:
            for f in d.glob("w-*"):
                f.unlink()
            subprocess.run(["sync"], check=True)
            is_cold = False
        j, peak = measure(["timeout", "1800", "mpiexec", "-n", a.ranks, EXE, variant, d, "--blocks", blocks,
                           "--frame-bytes", frame_bytes, "--frames", a.frames])
        return j, peak, is_cold

    def report(variant, blocks, results):
        times = [j["open_seconds"] if variant.startswith("open-") else j["seconds"] for j, _, _ in results]
        disk = [j["seconds_to_disk"] for j, _, _ in results]
        rss = max(peak for _, peak, _ in results)
        last, is_cold = results[-1][0], results[-1][2]
        row = dict(variant=variant, blocks=blocks, ranks=a.ranks, bytes=last["bytes"], seconds=statistics.median(times),
                   seconds_to_disk=statistics.median(disk), peak_rss_bytes=rss, piece_bytes_rank0=last["piece_bytes_rank0"],
                   cold=is_cold, runs=times)
        if not variant.startswith("open-"):
            row["mbs"] = last["bytes"] / row["seconds"] / 1e6
            if row["seconds_to_disk"] > 0:
                row["mbs_to_disk"] = last["bytes"] / row["seconds_to_disk"] / 1e6
        rows.append(row)
        ref = next((r for r in rows if r["blocks"] == blocks and r["variant"] == ("read-pread" if variant.startswith("read-") else "ceiling")), None)
        ratio = f"{row['mbs'] / ref['mbs']:.2f}" if ref and "mbs" in row else "-"
        print(f"{variant:>22} {blocks:>6} {row.get('mbs', 0):>9.0f} {row.get('mbs_to_disk', 0):>13.0f} {ratio:>9} "
              f"{row['seconds']:>9.3f} {rss / 2**20:>9.0f} {last['piece_bytes_rank0'] / 2**20:>12.0f}", flush=True)
        return last["path"]

    def run(variant, blocks, frame_bytes, keep=False, cold=False):
        path = report(variant, blocks, [once(variant, blocks, frame_bytes, cold) for _ in range(a.repeat)])
        return path if keep else None

    def run_alternated(variants, blocks, frame_bytes, cold=False):
        """Reads: the variants take turns, repeat after repeat (the disk's pace drifts between
        runs more than the variants differ)."""
        results = {v: [] for v in variants}
        for _ in range(a.repeat):
            for v in variants:
                results[v].append(once(v, blocks, frame_bytes, cold))
        for v in variants:
            report(v, blocks, results[v])

    print(f"{'variant':>22} {'blocks':>6} {'MB/s':>9} {'to disk MB/s':>13} {'/ceiling':>9} {'seconds':>9} {'peak MiB':>9} {'arrays MiB':>12}")
    digests = {}
    for v in ("ceiling", "cosa-lines", "cosa-blocks", "raw-independent", "raw-collective", "raw-aggregated",
              "raw-aggregated-async", "hdf5", "hdf5-independent"):
        path = run(v, a.blocks, a.frame_bytes, keep=True)
        if v.startswith(("cosa", "raw")):
            digests[v] = md5(path)
    if len(set(digests.values())) != 1:
        sys.exit(f"the raw files differ: {digests}")
    print(f"  every raw write variant wrote the same bytes (md5 {next(iter(digests.values()))})")
    # The restart: the files the last runs left (renamed so that the writes do not remove them).
    for src, dst in (("w-blocks.dat", "blocks.dat"), ("w-blocks.dat.json", "blocks.dat.json"), ("w-blocks.h5", "blocks.h5")):
        if (d / src).exists():
            (d / src).replace(d / dst)
    if not (d / "blocks.dat").exists():
        run("raw-collective", a.blocks, a.frame_bytes)
        (d / "w-blocks.dat").replace(d / "blocks.dat")
        (d / "w-blocks.dat.json").replace(d / "blocks.dat.json")
    run_alternated(("read-pread", "read-raw-collective", "read-raw-independent", "read-raw-aggregated", "read-hdf5"), a.blocks,
                   a.frame_bytes, cold=True)
    for f in d.glob("*"):
        f.unlink()
    # The caller's compute between frames (as long as a frame's write): aggregated-async
    # overlaps the writes with it; what the caller still waits for is left.
    frame_seconds = next(r for r in rows if r["variant"] == "raw-aggregated")["seconds"] / a.frames
    waits = {}
    for v in ("raw-aggregated", "raw-aggregated-async"):
        times = []
        for _ in range(a.repeat):
            for f in d.glob("w-*"):
                f.unlink()
            subprocess.run(["sync"], check=True)
            j, _ = measure(["timeout", "1800", "mpiexec", "-n", a.ranks, EXE, v, d, "--blocks", a.blocks, "--frame-bytes",
                            a.frame_bytes, "--frames", a.frames, "--compute", f"{frame_seconds:.3f}"])
            times.append(j["seconds"])
        waits[v] = statistics.median(times)
        rows.append(dict(variant=v + "+compute", blocks=a.blocks, ranks=a.ranks, compute=frame_seconds, seconds=waits[v]))
    print(f"  with {frame_seconds:.2f} s of compute after each frame, the caller waits {waits['raw-aggregated']:.3f} s for "
          f"aggregated's writes and {waits['raw-aggregated-async']:.3f} s for aggregated-async's")
    # Many small blocks: concatenated against one dataset per block.
    for v in ("ceiling", "hdf5", "hdf5-independent", "hdf5-per-block"):
        run(v, a.small_blocks, a.small_frame_bytes, keep=True)
    for src, dst in (("w-blocks.h5", "blocks.h5"), ("w-per-block.h5", "per-block.h5")):
        if (d / src).exists():
            (d / src).replace(d / dst)
    run("hdf5", a.small_blocks, a.small_frame_bytes)
    (d / "w-blocks.h5").replace(d / "blocks.h5")
    run_alternated(("open-hdf5", "open-hdf5-per-block"), a.small_blocks, a.small_frame_bytes, cold=True)
    small = {r["variant"]: r for r in rows if r["blocks"] == a.small_blocks}
    best = min(small["hdf5"]["seconds"], small["hdf5-independent"]["seconds"])
    print(f"  {a.small_blocks} blocks: concatenated HDF5 writes {small['hdf5-per-block']['seconds'] / best:.1f}x faster "
          f"and opens {small['open-hdf5-per-block']['seconds'] / max(small['open-hdf5']['seconds'], 1e-9):.1f}x faster than one dataset per block")
    for f in d.glob("*"):
        f.unlink()
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
