#!/usr/bin/env python3
"""What one rank costs as the rank count grows: the parallel paths run under mpiexec at P =
16, 64 and 256 ranks (oversubscribed, 16 ranks per emulated node), every rank measured from
outside (bench/rank_probe.py: the bytes it read and wrote through system calls, its peak
resident memory from the kernel's own count), and every output verified.

Paths (--paths, all by default):
- partition: `mpiexec -n P anabranch partition MESH -n P --method sfc` (the telemac layout,
  frames included); its files must be the serial partitioner's bytes.
- solver: each rank's part from the global geometry and the element -> part file
  (ab_part_open_global), FRAMES frames written into one shared file (aggregated), the last
  read back as a restart (bench/scale_solver.py); the file must be the same bytes at every P.
- merge: `mpiexec -n P anabranch merge` of P parts (frames included): the serial merge's bytes.
- convert, convert-h5: `mpiexec -n P anabranch convert MESH out.slf` (the serial convert's
  bytes) and `out.h5` (the same values, `anabranch diff`).
- blocks: examples/blocks_solver, 300 blocks balanced over P processes, 2 frames into one
  raw block file (aggregated): one process's bytes.

For each run: the largest rank's MPI calls and the bytes it handed to them (bench/mpi_count.c,
through MPI's profiling interface), the largest rank's bytes read against the bound 2 x (inputs / P) + 2 MiB, all
ranks' bytes read against inputs + 1.5 x written + 64 KiB x P, the largest rank's peak RSS,
and rank 0's bytes read (rank 0 gets no pass). The same command on a tiny mesh (4 triangles
a rank) first gives what a rank reads and holds to start (MPI, the Python modules) and to
talk to P - 1 others: its reads are subtracted before the bounds are checked, and "own RSS"
is the peak beyond its peak. Prints a table, fits bytes read per rank = a + b / P, and writes JSON.
Usage: bench/scale.py [--ranks 16 64 256] [--elements 1000000] [--frames 2] [--per-node 16]
                      [--work DIR] [--json OUT] [--timeout S] [--quick]
"""
import argparse
import filecmp
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("ANABRANCH_BUILD", HERE.parent / "build"))
AB = os.environ.get("ANABRANCH", str(BUILD / "src/cli/anabranch"))
PYTHON = os.environ.get("PYTHON", str(BUILD / "venv/bin/python") if (BUILD / "venv/bin/python").exists() else sys.executable)
MPIEXEC = os.environ.get("AB_MPIEXEC", "mpiexec")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1", ANABRANCH_PROGRESS="0",
           PYTHONPATH=os.environ.get("PYTHONPATH", str(BUILD / "python")))
MiB = 1 << 20
if (BUILD / "bench/libab_mpi_count.so").exists():  # each rank's MPI calls counted (bench/mpi_count.c)
    ENV["AB_MPI_COUNT_LIB"] = str(BUILD / "bench/libab_mpi_count.so")


LIMIT = {"seconds": 1800}  # any one command (--timeout)


def run(*args, **kw):
    try:
        r = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=kw.pop("env", ENV),
                           timeout=LIMIT["seconds"], **kw)
    except subprocess.TimeoutExpired:
        sys.exit(f"scale: {' '.join(map(str, args[:6]))}... ran past {LIMIT['seconds']} s")
    if r.returncode != 0:
        sys.exit(f"scale: {' '.join(map(str, args[:6]))}... failed ({r.returncode}): {r.stderr.strip()[-2000:]}")
    return r


def probed(ranks, per_node, probe_dir, *cmd):
    """Runs cmd on `ranks` ranks, each under rank_probe.py; returns (seconds, records by rank)."""
    shutil.rmtree(probe_dir, ignore_errors=True)
    probe_dir.mkdir(parents=True)
    env = dict(ENV, ANABRANCH_TEST_NODES=str(max(1, ranks // per_node)))
    t0 = time.monotonic()
    run(MPIEXEC, "-n", ranks, PYTHON, HERE / "rank_probe.py", probe_dir, *cmd, env=env)
    secs = time.monotonic() - t0
    recs = sorted((json.loads(p.read_text()) for p in probe_dir.glob("rank.*.json")), key=lambda r: r["rank"])
    if len(recs) != ranks or any(r["status"] != 0 or r["read"] is None for r in recs):
        sys.exit(f"scale: {len(recs)} of {ranks} ranks reported, or one failed")
    return secs, recs


def same_files(a, b):
    names = sorted(p.name for p in a.iterdir())
    if names != sorted(p.name for p in b.iterdir()):
        return False
    return all(filecmp.cmp(a / n, b / n, shallow=False) for n in names)


def partition_run(a, p, mesh, work):
    """`mpiexec -n p anabranch partition MESH -n p --method sfc` beside the serial partitioner:
    (seconds, records, bytes written, verified)."""
    ref, out = work / f"serial{p}", work / f"par{p}"
    for d in (ref, out):
        shutil.rmtree(d, ignore_errors=True)
    run(AB, "partition", mesh, "-n", p, "--method", "sfc", "-o", ref)
    secs, recs = probed(p, a.per_node, work / "probe", AB, "partition", mesh, "-n", p, "--method", "sfc", "-o", out)
    written = sum(f.stat().st_size for f in out.iterdir())
    ok = same_files(ref, out)
    shutil.rmtree(ref), shutil.rmtree(out)
    return secs, recs, written, ok


def solver_run(a, p, mesh, work):
    """bench/scale_solver.py on p ranks from MESH and its serial sfc partition file:
    (seconds, records, bytes written, the output)."""
    epart_dir = work / f"e{p}"
    shutil.rmtree(epart_dir, ignore_errors=True)
    run(AB, "partition", mesh, "-n", p, "--method", "sfc", "--layout", "partition-file", "-o", epart_dir)
    epart = work / f"e{p}.epart"
    shutil.move(epart_dir / f"{mesh.name}.epart.{p}", epart)
    shutil.rmtree(epart_dir)
    out = work / f"solver{p}.slf"
    secs, recs = probed(p, a.per_node, work / "probe", PYTHON, HERE / "scale_solver.py", mesh, epart, out, "aggregated", a.frames)
    return secs, recs, out.stat().st_size, out


def merge_run(a, p, mesh, work):
    """`mpiexec -n p anabranch merge` of the serial partitioner's p parts (frames included)
    beside the serial merge: (seconds, records, bytes written, verified, bytes of input)."""
    parts, ref, out = work / f"parts{p}", work / f"merged{p}-serial.slf", work / f"merged{p}.slf"
    shutil.rmtree(parts, ignore_errors=True)
    run(AB, "partition", mesh, "-n", p, "--method", "sfc", "-o", parts)
    base = parts / mesh.name
    inputs = sum(f.stat().st_size for f in parts.iterdir() if f.name.startswith(mesh.name)) + mesh.stat().st_size
    run(AB, "merge", base, "--geo", mesh, "-o", ref)
    secs, recs = probed(p, a.per_node, work / "probe", AB, "merge", base, "--geo", mesh, "-o", out)
    ok = filecmp.cmp(ref, out, shallow=False)
    written = out.stat().st_size
    shutil.rmtree(parts)
    ref.unlink(), out.unlink()
    return secs, recs, written, ok, inputs


def convert_run(a, p, mesh, work, ext):
    """`mpiexec -n p anabranch convert MESH out.EXT` beside the serial convert: (seconds,
    records, bytes written, verified). SERAFIN outputs must be the same bytes; HDF5 ones
    the same values (`anabranch diff`)."""
    ref, out = work / f"conv{p}-serial{ext}", work / f"conv{p}{ext}"
    run(AB, "convert", mesh, ref)
    secs, recs = probed(p, a.per_node, work / "probe", AB, "convert", mesh, out)
    if ext == ".slf":
        ok = filecmp.cmp(ref, out, shallow=False)
    else:
        ok = subprocess.run([AB, "diff", str(ref), str(out)], capture_output=True, env=ENV).returncode == 0
    written = out.stat().st_size
    for f in work.glob(f"conv{p}*"):
        f.unlink()
    return secs, recs, written, ok


def blocks_run(a, p, work, tiny=False):
    """examples/blocks_solver on p ranks: 300 blocks of about elements/2 points together
    (4 on the tiny grid), balanced over p processes (`anabranch balance`), 2 frames of its
    variables written to one raw file (aggregated), which must be one process's bytes:
    (seconds, records, bytes written, verified, bytes of input: the assignment)."""
    import random
    r = random.Random(5)
    count = 4 if tiny else 300
    side = max(3, round((a.elements / 2 / count) ** (1 / 3)))
    lines = ["# id ni nj nk"] + [f"{b + 1} {side + r.randint(-1, 2)} {side + r.randint(-1, 2)} {side}" for b in range(count)]
    (work / "blocks.txt").write_text("\n".join(lines) + "\n")
    assignment, alone = work / "assign.json", work / "assign1.json"
    assignment.write_text(run(AB, "balance", work / "blocks.txt", "-n", p, "--json").stdout)
    alone.write_text(run(AB, "balance", work / "blocks.txt", "-n", 1, "--json").stdout)
    out = work / "blocks.raw"
    for f in work.glob("blocks.raw*"):
        f.unlink()
    solver = BUILD / "examples/blocks_solver"
    run(solver, alone, out, 2, "strategy=aggregated")  # one process: the file's reference bytes
    one = out.read_bytes()
    for f in work.glob("blocks.raw*"):
        f.unlink()
    secs, recs = probed(p, a.per_node, work / "probe", solver, assignment, out, 2, "strategy=aggregated")
    ok = out.read_bytes() == one
    written = out.stat().st_size
    return secs, recs, written, ok, assignment.stat().st_size


def fit(rows):
    """Least squares of bytes read by the largest rank = a + b / P."""
    xs = [1 / r["ranks"] for r in rows]
    ys = [r["max_read"] for r in rows]
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return my - b * mx, b


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--elements", type=int, default=1_000_000)
    ap.add_argument("--frames", type=int, default=2)
    ap.add_argument("--per-node", type=int, default=16)
    ap.add_argument("--paths", nargs="+", default=["partition", "solver", "merge", "convert", "convert-h5", "blocks"],
                    choices=["partition", "solver", "merge", "convert", "convert-h5", "blocks"])
    ap.add_argument("--work", type=pathlib.Path)
    ap.add_argument("--json", type=pathlib.Path)
    ap.add_argument("--timeout", type=int, default=LIMIT["seconds"], help="seconds any one command may take")
    ap.add_argument("--quick", action="store_true", help="a small mesh at 2 and 4 ranks (keeps the bench from rotting)")
    a = ap.parse_args()
    LIMIT["seconds"] = a.timeout
    if a.quick:
        a.ranks, a.elements, a.per_node = [2, 4], 20000, 2
    work = a.work or pathlib.Path(tempfile.mkdtemp(prefix="ab-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    mesh = work / "m.slf"
    run(AB, "generate", "-n", a.elements, "--frames", a.frames, "-o", mesh)
    mesh_bytes = mesh.stat().st_size
    print(f"mesh: {a.elements} triangles, {a.frames} frames, {mesh_bytes / MiB:.1f} MiB; {a.per_node} ranks per emulated node")
    rows, solver_ref, blocks_ref = [], None, {}
    for p in a.ranks:
        # The same commands on a tiny mesh (4 triangles a rank) first: what a rank costs to
        # start (MPI, the Python modules) and to talk to P - 1 others, subtracted below.
        tiny = work / f"tiny{p}.slf"
        run(AB, "generate", "-n", 4 * p, "-o", tiny)
        if "partition" in a.paths:
            base = partition_run(a, p, tiny, work)[1]
            rows.append(summary("partition", p, *partition_run(a, p, mesh, work), base, mesh_bytes))
        if "solver" in a.paths:
            base = solver_run(a, p, tiny, work)[1]
            secs, recs, written, out = solver_run(a, p, mesh, work)
            ok = True
            if solver_ref is None:
                solver_ref = work / "solver-first.slf"
                shutil.copy(out, solver_ref)
            else:
                ok = filecmp.cmp(solver_ref, out, shallow=False)
            rows.append(summary("solver", p, secs, recs, written, ok, base, mesh_bytes + (work / f"e{p}.epart").stat().st_size))
        if "merge" in a.paths:
            base = merge_run(a, p, tiny, work)[1]
            secs, recs, written, ok, inputs = merge_run(a, p, mesh, work)
            rows.append(summary("merge", p, secs, recs, written, ok, base, inputs))
        if "blocks" in a.paths and (BUILD / "examples/blocks_solver").exists():
            base = blocks_run(a, p, work, tiny=True)[1]
            secs, recs, written, ok, inputs = blocks_run(a, p, work)
            if blocks_ref.get("file") is None:
                blocks_ref["file"] = work / "blocks-first.raw"
                shutil.copy(work / "blocks.raw", blocks_ref["file"])
            else:
                ok = ok and filecmp.cmp(blocks_ref["file"], work / "blocks.raw", shallow=False)
            rows.append(summary("blocks", p, secs, recs, written, ok, base, inputs))
        for path, ext in (("convert", ".slf"), ("convert-h5", ".h5")):
            if path in a.paths:
                base = convert_run(a, p, tiny, work, ext)[1]
                rows.append(summary(path, p, *convert_run(a, p, mesh, work, ext), base, mesh_bytes))
    print(f"\n{'path':10} {'P':>5} {'s':>7} {'verified':>8} {'max read':>10} {'bound':>9} {'rank 0':>9} {'all read':>10} "
          f"{'bound':>10} {'start':>7} {'peak RSS':>9} {'own RSS':>8} {'MPI calls':>9} {'MPI sent':>9}")
    for r in rows:
        print(f"{r['path']:10} {r['ranks']:5} {r['seconds']:7.1f} {'yes' if r['verified'] else 'NO':>8} "
              f"{r['max_read'] / MiB:9.2f}M {r['max_bound'] / MiB:8.2f}M {r['rank0_read'] / MiB:8.2f}M "
              f"{r['all_read'] / MiB:9.1f}M {r['all_bound'] / MiB:9.1f}M {r['start'] / MiB:6.2f}M {r['max_rss'] / MiB:8.1f}M "
              f"{(r['max_rss'] - r['start_rss']) / MiB:7.1f}M {r['max_mpi_calls']:9} {r['max_mpi_bytes'] / MiB:8.2f}M")
    result = {"elements": a.elements, "frames": a.frames, "per_node": a.per_node, "mesh_bytes": mesh_bytes, "rows": rows}
    print("\nbytes read by the largest rank, beyond start-up, fitted as a + b / P:")
    for path in a.paths:
        mine = [r for r in rows if r["path"] == path]
        f = fit(mine)
        if f:
            a0, b = f
            result.setdefault("fit", {})[path] = {"a": a0, "b": b}
            print(f"  {path:10} a = {a0 / MiB:.2f} MiB, b = {b / MiB:.1f} MiB: at 10,000 ranks {(a0 + b / 1e4) / MiB:.2f} MiB, "
                  f"at 100,000 {(a0 + b / 1e5) / MiB:.2f} MiB per rank")
        if len(mine) >= 2:
            growth = mine[-1]["max_rss"] / mine[0]["max_rss"]
            first_own = mine[0]["max_rss"] - mine[0]["start_rss"]
            own = (mine[-1]["max_rss"] - mine[-1]["start_rss"]) / first_own if first_own >= MiB else None
            result.setdefault("rss_growth", {})[path] = {"peak": growth, "own": own}
            print(f"  {path:10} largest rank's peak RSS at P = {mine[-1]['ranks']}: {growth:.2f}x P = {mine[0]['ranks']}'s; "
                  f"beyond the same command on the tiny mesh: " + (f"{own:.2f}x" if own else "under 1 MiB"))
    failed = [f"{r['path']} at P = {r['ranks']}" for r in rows
              if not (r["verified"] and r["max_read"] <= r["max_bound"] and r["all_read"] <= r["all_bound"])]
    result["failed"] = failed
    if a.json:
        a.json.write_text(json.dumps(result, indent=1))
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)
    if failed:
        sys.exit("scale: over the bound or not verified: " + ", ".join(failed))


def summary(path, p, secs, recs, written, verified, base, inputs):
    """A run's row; base: the same command's records on the tiny mesh (start-up and talk)."""
    start = max(r["read"] for r in base)  # the largest rank's reads on the tiny mesh
    start_rss = max(r["peak_rss"] for r in base)
    reads = [max(0, r["read"] - start) for r in recs]
    return {"path": path, "ranks": p, "seconds": secs, "verified": verified, "start": start, "start_rss": start_rss,
            "max_read": max(reads), "rank0_read": reads[0], "all_read": sum(reads),
            "max_bound": 2 * inputs / p + 2 * MiB, "all_bound": inputs + 1.5 * written + 64 * 1024 * p,
            "max_rss": max(r["peak_rss"] for r in recs), "rank0_rss": recs[0]["peak_rss"],
            "max_written": max(r["written"] for r in recs), "per_rank_read": [r["read"] for r in recs],
            "max_mpi_calls": max((r.get("mpi_calls", 0) for r in recs), default=0),
            "max_mpi_bytes": max((r.get("mpi_bytes", 0) for r in recs), default=0),
            "start_mpi_calls": max((r.get("mpi_calls", 0) for r in base), default=0)}

if __name__ == "__main__":
    main()
