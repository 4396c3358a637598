#!/usr/bin/env python3
"""Compressed HDF5 and CGNS outputs: ratio and speed per SPEC.

Ratio: every TELEMAC result in ../shared/data/telemac converted to HDF5 (`anabranch convert
IN OUT.h5 --compress SPEC`, alone), the result values only (the PointData datasets' stored
bytes against their values' bytes), summed over the files; beside them HDF5's own deflate
without the shuffle (h5py's gzip, level 4, a frame a chunk) on the same values, and the file
order against a Z-order (Morton) order of the nodes (a mesh-aware order; the file's wins or
loses per file); and the error-bounded codecs of hdf5plugin (SZ3, ZFP) at rel=1e-4, a
frame a dataset. Every value is checked against the source by h5py and numpy (not
anabranch's reader): lossless bit for bit, rel=TOL within TOL x the variable's range in the
frame.

Speed: a generated mesh (`anabranch generate -n N --frames F`) written to HDF5 under
`mpiexec -n R` uncompressed and with each SPEC, and read back (`convert OUT.h5 back.slf`
under mpiexec -n R), the median of --repeat runs, wall time of the whole command.
--format cgns: the same for CGNS outputs (the FlowSolution arrays' stored bytes; the
reference codecs and orders are HDF5's only). --format blocks: a generated multi-block flow
(--blocks zones of --points^3 points, 5 variables in double precision, smooth fields: a
shear layer and waves), an HDF5 block file converted to CGNS and to a compressed HDF5 block
file under mpiexec -n R uncompressed and with each SPEC (every value checked against the
source by h5py and numpy) and read back (to a raw block file).
Usage: bench/compress.py [--format h5|cgns|blocks] [--blocks 8] [--points 48] [--elements 2000000] [--frames 5] [--ranks 2] [--repeat 3] [--work DIR] [--quick]
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("ANABRANCH_BUILD", HERE.parent / "build"))
AB = os.environ.get("ANABRANCH", str(BUILD / "src/cli/anabranch"))
DATA = pathlib.Path(os.environ.get("AB_TELEMAC_DATA", HERE.parents[1] / "shared/data/telemac"))
sys.path.insert(0, str(HERE.parent / "tests/python"))
import slf  # noqa: E402  (the tests' independent SERAFIN reader)

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", ANABRANCH_PROGRESS="0")
# Each bound with both codecs: deflate (the default, in every HDF5) and zstd (filter 32015).
SPECS = ["lossless", "rel=1e-4", "rel=1e-3", "lossless:zstd", "rel=1e-4:zstd", "rel=1e-3:zstd"]


def run(*args, ranks=0):
    cmd = ([os.environ.get("MPIEXEC", "mpiexec"), "-n", str(ranks)] if ranks else []) + [AB, "-q", *map(str, args)]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=ENV, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def source_values(path):
    s = slf.read(path)
    names = [v[:16].strip() for v in s.vars]
    return s, {k: np.array([np.asarray(fr[1][i]) for fr in s.frames]) for i, k in enumerate(names)}


def stored(h5, check=None):
    """(stored bytes, values' bytes) of the PointData datasets (a CGNS mesh result: its
    FlowSolution arrays, a frame each); check(name, frames) on each."""
    import h5py
    import hdf5plugin  # noqa: F401  (h5py's zstd: the values are decoded by a decoder not anabranch's)
    with h5py.File(h5, "r") as f:
        if "VTKHDF" not in f:
            zone = f["Base/mesh"]
            steps = sorted(k for k in zone if k.startswith("FlowSolution"))
            desc = json.loads(f[" anabranch"][()].tobytes())
            names = [bytes.fromhex(n).decode("latin-1")[:16].strip() for n, _ in desc["variables"]]
            data = {names[i]: [zone[s][k][" data"] for s in steps] for i, k in enumerate(zone[steps[0]])} if steps else {}
            size = sum(d.id.get_storage_size() for ds in data.values() for d in ds)
            raw = sum(d.size * d.dtype.itemsize for ds in data.values() for d in ds)
            if check:
                for k, ds in data.items():
                    check(k, np.concatenate([d[()] for d in ds]))
            return size, raw
        pd = f["VTKHDF/PointData"]
        size = sum(pd[k].id.get_storage_size() for k in pd)
        raw = sum(pd[k].size * pd[k].dtype.itemsize for k in pd)
        if check:
            for k in pd:
                check(k, pd[k][()])
    return size, raw


def checker(values, spec):
    kind, _, tol = spec.split(":")[0].partition("=")

    def check(name, got):
        want = values[name]
        got = got.reshape(want.shape)
        for f in range(want.shape[0]):
            w, g = want[f].astype(np.float64), got[f].astype(np.float64)
            ok = ~np.isnan(w)
            if kind == "lossless":
                assert np.array_equal(g[ok], w[ok]), (name, f)
            else:
                bound = float(tol) * (w[ok].max() - w[ok].min()) if kind == "rel" else float(tol)
                assert np.all(np.abs(g[ok] - w[ok]) <= bound), (name, f, np.abs(g[ok] - w[ok]).max(), bound)
    return check


def morton(x, y):
    def q(a):
        a = (a - a.min()) / max(a.max() - a.min(), 1e-30)
        return (a * 65535).astype(np.uint64)
    X, Y, key = q(x), q(y), np.zeros(len(x), dtype=np.uint64)
    for b in range(16):
        key |= ((X >> np.uint64(b)) & np.uint64(1)) << np.uint64(2 * b) | ((Y >> np.uint64(b)) & np.uint64(1)) << np.uint64(2 * b + 1)
    return np.argsort(key, kind="stable")


def h5py_deflate(values, work, order=None, rounded_like=None):
    """Stored bytes of the values through h5py's gzip (level 4), with and without the shuffle."""
    import h5py
    out = {}
    for shuffle in (False, True):
        p = work / "ref.h5"
        with h5py.File(p, "w") as f:
            for k, v in values.items():
                v = rounded_like[k] if rounded_like is not None else v
                v = v if order is None else v[:, order]
                f.create_dataset(k, data=v, chunks=(1, v.shape[1]), compression="gzip", compression_opts=4, shuffle=shuffle)
        with h5py.File(p, "r") as f:
            out[shuffle] = sum(f[k].id.get_storage_size() for k in f)
    return out


def error_bounded_plugins(values, work, tol=1e-4):
    """Stored bytes of the values through hdf5plugin's SZ3 (32024) and ZFP (32013, accuracy
    mode): each variable's frame its own dataset (their bounds are one per dataset) with the
    absolute bound tol x the frame's range (lossless zstd where the range is 0), every value
    checked within it; None where hdf5plugin lacks them."""
    import h5py
    try:
        import hdf5plugin
    except ImportError:
        return None
    out = {}
    for name, make in (("SZ3", lambda b: hdf5plugin.SZ3(absolute=b)), ("ZFP", lambda b: hdf5plugin.Zfp(accuracy=b))):
        p, total = work / "plugin.h5", 0
        with h5py.File(p, "w") as f:
            for k, v in values.items():
                for t, frame in enumerate(v):
                    frame = frame.astype(frame.dtype.newbyteorder("="))  # SZ3's plugin takes native floats only
                    bound = tol * float(frame.max() - frame.min())
                    d = f.create_dataset(f"{k}/{t}", data=frame, chunks=frame.shape,
                                         **(make(bound) if bound > 0 else hdf5plugin.Zstd(clevel=1)))
                    total += d.id.get_storage_size()
                    assert np.all(np.abs(d[()].astype(np.float64) - frame) <= bound), (name, k, t)
        out[name] = total
    return out


def ratios(work, suffix="h5"):
    import h5py
    files = sorted(p for p in DATA.glob("*.slf") if not p.name.startswith("geo_"))
    if not files:
        print(f"no TELEMAC results in {DATA}: ratios on the generated mesh only")
        return [], {}
    rows, totals = [], {}
    for p in files:
        s, values = source_values(p)
        raw = sum(v.size * v.dtype.itemsize for v in values.values())
        row = {"file": p.name, "values": raw}
        for spec in SPECS:
            out = work / f"c.{suffix}"
            run("convert", p, out, "--compress", spec)
            row[spec], _ = stored(out, checker(values, spec))
            if spec == "rel=1e-4" and suffix == "h5":  # the same rounded values in a Z-order of the nodes
                with h5py.File(out, "r") as f:
                    rounded = {k: f["VTKHDF/PointData"][k][()].reshape(values[k].shape) for k in values}
                n2 = len(s.x) // s.nplan
                o2 = morton(np.asarray(s.x[:n2], dtype=np.float64), np.asarray(s.y[:n2], dtype=np.float64))
                order = np.concatenate([o2 + k * n2 for k in range(s.nplan)])
                row["rel=1e-4 z-order"] = h5py_deflate(values, work, order, rounded)[True]
        if suffix == "h5":
            ref = h5py_deflate(values, work)
            row["deflate"], row["shuffle+deflate (h5py)"] = ref[False], ref[True]
            for name, size in (error_bounded_plugins(values, work) or {}).items():
                row[f"rel=1e-4 {name}"] = size
        rows.append(row)
        for k, v in row.items():
            if k != "file":
                totals[k] = totals.get(k, 0) + v
    cols = [c for c in ["deflate", "shuffle+deflate (h5py)"] + SPECS + ["rel=1e-4 z-order", "rel=1e-4 SZ3", "rel=1e-4 ZFP"] if c in totals]
    print(f"{'file':46} {'values':>10} " + " ".join(f"{c:>14}" for c in cols))
    for r in rows + [dict(totals, file="all")]:
        print(f"{r['file']:46} {r['values']:>10} " + " ".join(f"{r['values'] / r[c]:>13.2f}x" for c in cols))
    return rows, totals


def speeds(work, elements, frames, ranks, repeat, suffix="h5"):
    src = work / "gen.slf"
    if not src.exists():
        run("generate", "-n", elements, "--frames", frames, "-o", src)
    out = []
    base = None
    for spec in [None] + SPECS:
        h5 = work / f"s.{suffix}"
        extra = [] if spec is None else ["--compress", spec]
        w = statistics.median(run("convert", src, h5, *extra, ranks=ranks) for _ in range(repeat))
        size = stored(h5)
        r = statistics.median(run("convert", h5, work / "back.slf", ranks=ranks) for _ in range(repeat))
        if base is None:
            base = (w, r)
        out.append({"spec": spec or "none", "write_s": w, "read_s": r, "ratio": size[1] / size[0],
                    "write_vs_none": w / base[0], "read_vs_none": r / base[1]})
        print(f"{spec or 'none':10} write {w:7.3f} s ({w / base[0]:.2f}x)  read {r:7.3f} s ({r / base[1]:.2f}x)  ratio {size[1] / size[0]:.2f}x")
    return out


BLOCKS_SCRIPT = """
import sys, numpy as np, anabranch
from mpi4py import MPI
comm = MPI.COMM_WORLD
nb, n, frames = (int(x) for x in sys.argv[2:5])
side = int(round(nb ** (1 / 3))) or 1
layout = anabranch.BlockLayout()
for b in range(nb):
    layout.add_block(b + 1, n, n, n)
mine = range(nb * comm.rank // comm.size, nb * (comm.rank + 1) // comm.size)
for b in mine:
    layout.add_piece(b + 1)
def xyz(b):  # block b's place in a side^3 arrangement of the unit cube (a shear layer across z)
    o = np.array([b % side, b // side % side, b // side // side], float)
    k, j, i = np.meshgrid(*(np.arange(n) / (n - 1) for _ in range(3)), indexing="ij")
    return [(o[a] + g) / side for a, g in enumerate((i, j, k))]
def fields(b, t):
    x, y, z = xyz(b)
    shear = np.tanh((z - 0.5) / 0.05)
    wave = np.sin(2 * np.pi * (x + 0.3 * t)) * np.cos(2 * np.pi * y)
    return [1.0 + 0.1 * wave, shear + 0.05 * wave, 0.1 * np.cos(2 * np.pi * (x - y + t)), 0.02 * wave * (1 - shear ** 2),
            1 / 1.4 + 0.05 * wave + 0.01 * shear]
with anabranch.BlockWriter(comm, sys.argv[1], layout, ["rho", "u", "v", "w", "p"], "precision=8") as w:
    w.write_grid([[a.ravel() for a in xyz(b)] for b in mine])
    for f in range(frames):
        w.write_frame(0.1 * f, [[a.ravel() for a in fields(b, 0.1 * f)] for b in mine])
"""


def blocks_stored(path, source=None, spec=None):
    """(stored bytes, values' bytes) of a CGNS block file's FlowSolution arrays (an HDF5 block
    file's frames); with the source block file (HDF5) and the SPEC, every value checked against
    it by numpy (rel: the bound from the variable's range over every block in that frame)."""
    import h5py
    import hdf5plugin  # noqa: F401
    size = raw = 0
    if str(path).endswith(".h5"):
        with h5py.File(path, "r") as f, h5py.File(source or path, "r") as src:
            for frame in sorted(f["frames"]):
                for var, d in f["frames"][frame].items():
                    size += d.id.get_storage_size()
                    raw += d.size * d.dtype.itemsize
                    if source:
                        want, got = src[f"frames/{frame}/{var}"][()], d[()]
                        kind, _, tol = spec.split(":")[0].partition("=")
                        bound = 0.0 if kind == "lossless" else float(tol) * (want.max() - want.min()) if kind == "rel" else float(tol)
                        assert np.abs(got - want).max() <= bound, (spec, frame, var)
        return size, raw
    with h5py.File(path, "r") as f:
        src = h5py.File(source, "r") if source else None
        zones = sorted((z for z in f["Base"] if z.startswith("block_")), key=lambda z: int(z[6:]))
        steps = sorted(k for k in f["Base"][zones[0]] if k.startswith("FlowSolution"))
        for t, step in enumerate(steps):
            for name in f["Base"][zones[0]][step]:
                got = [f["Base"][z][step][name][" data"] for z in zones]
                size += sum(d.id.get_storage_size() for d in got)
                raw += sum(d.size * d.dtype.itemsize for d in got)
                if src is None:
                    continue
                var = {"Density": "rho", "VelocityX": "u", "VelocityY": "v", "VelocityZ": "w", "Pressure": "p"}[name]
                frame = sorted(src["frames"])[t]
                want = src[f"frames/{frame}/{var}"][()]
                off = src["blocks/offsets"][()]
                kind, _, tol = spec.split(":")[0].partition("=")
                bound = 0.0 if kind == "lossless" else float(tol) * (want.max() - want.min()) if kind == "rel" else float(tol)
                for b, d in enumerate(got):
                    err = np.abs(d[()].ravel() - want[off[b]:off[b + 1]]).max()
                    assert err <= bound, (spec, step, name, b, err, bound)
        if src is not None:
            src.close()
    return size, raw


def block_speeds(work, blocks, points, frames, ranks, repeat, suffix="cgns"):
    """A generated multi-block flow (smooth fields: a shear layer and waves, double precision)
    converted to CGNS (or an HDF5 block file: suffix h5) under mpiexec -n ranks, uncompressed
    and with each SPEC, and read back."""
    src = work / f"gen-{blocks}x{points}.h5"
    if not src.exists():
        (work / "gen_blocks.py").write_text(BLOCKS_SCRIPT)
        cmd = [os.environ.get("MPIEXEC", "mpiexec"), "-n", str(ranks), sys.executable, str(work / "gen_blocks.py"), str(src),
               str(blocks), str(points), str(frames)]
        subprocess.run(cmd, check=True, env=ENV)
    out, base = [], None
    for spec in [None] + SPECS:
        cgns = work / f"s.{suffix}"
        extra = [] if spec is None else ["--compress", spec]
        w = statistics.median(run("convert", src, cgns, *extra, ranks=ranks) for _ in range(repeat))
        size = blocks_stored(cgns, src if spec else None, spec)
        r = statistics.median(run("convert", cgns, work / "back.dat", ranks=ranks) for _ in range(repeat))
        base = base or (w, r)
        out.append({"spec": spec or "none", "write_s": w, "read_s": r, "ratio": size[1] / size[0],
                    "write_vs_none": w / base[0], "read_vs_none": r / base[1]})
        print(f"{suffix:5} {spec or 'none':14} write {w:7.3f} s ({w / base[0]:.2f}x)  read {r:7.3f} s ({r / base[1]:.2f}x)  ratio {size[1] / size[0]:.2f}x")
    return out


def main():
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--format", choices=["h5", "cgns", "blocks"], default="h5",
                   help="the output format measured (blocks: a generated multi-block flow to CGNS)")
    a.add_argument("--blocks", type=int, default=8, help="blocks: how many (of --points^3 points each)")
    a.add_argument("--points", type=int, default=48)
    a.add_argument("--elements", type=int, default=2_000_000)
    a.add_argument("--frames", type=int, default=5)
    a.add_argument("--ranks", type=int, default=2)
    a.add_argument("--repeat", type=int, default=3)
    a.add_argument("--work", default="bench-work-compress")
    a.add_argument("--json")
    a.add_argument("--quick", action="store_true", help="small generated mesh, one run each (the test suite)")
    o = a.parse_args()
    work = pathlib.Path(o.work)
    work.mkdir(parents=True, exist_ok=True)
    if o.quick:
        o.elements, o.frames, o.repeat = 20_000, 2, 1
    if o.format == "blocks":
        if o.quick:
            o.blocks, o.points = 2, 12
        rows, totals = [], {}
        speed = {suffix: block_speeds(work, o.blocks, o.points, o.frames, o.ranks, o.repeat, suffix) for suffix in ("cgns", "h5")}
    else:
        rows, totals = ratios(work, o.format)
        speed = speeds(work, o.elements, o.frames, o.ranks, o.repeat, o.format)
    if o.json:
        pathlib.Path(o.json).write_text(json.dumps({"files": rows, "totals": totals, "speed": speed}, indent=1))


if __name__ == "__main__":
    main()
