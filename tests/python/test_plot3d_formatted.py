"""PLOT3D grids as CFD codes publish them, found by their bytes whatever their name:
formatted (Fortran list-directed text in the dialects NASA CFL3D's test cases use: commas and
repeat counts, fixed-width headers, 3 or 5 values a line, wrapped dimension lines), CFL3D's
own layout (each block's "jdim kdim idim" before its coordinates, no block count) formatted
and binary, 2D and IBLANK, and a big-endian binary grid named *.bin. Each through `info`,
`balance` and `convert` to HDF5, every coordinate compared with Python's own reading of the
text (float()); damaged files refused in one line naming the block and the byte."""
import itertools
import json
import pathlib
import sys

import numpy as np
import pytest

import conftest

pytestmark = pytest.mark.formats
h5py = pytest.importorskip("h5py")

DIMS = [(2, 5, 4), (3, 4, 2), (2, 3, 3)]


def coords(b, dims, rng):
    """x, y, z of block b (first index fastest), values with 17 significant digits; whole
    planes repeat (as CFL3D's 2D grids do: both i-planes hold the same points)."""
    ni, nj, nk = dims
    base = rng.random((nk, nj)) * 10.0 ** rng.integers(-3, 4) + b
    x = np.repeat(base[:, :, None], ni, axis=2)
    y = x * 0.5 - 1.0
    z = np.full((nk, nj, ni), -2.0 * b)  # one value for the whole block: long repeats
    return [x.ravel(), y.ravel(), z.ravel()]


def text_values(values, dialect):
    """Each value as the dialect writes it: repr() (17 digits at most) with runs of equal
    values as r*v (A), 16 digits with 3-digit exponents (B), 8 digits (C)."""
    out = []
    for v, run in itertools.groupby(values):
        n = len(list(run))
        if dialect == "B":
            m, e = f"{v:.15E}".split("E")
            t = f"{m}E{int(e):+04d}"
        elif dialect == "C":
            t = f"{v:.7E}"
        else:
            t = repr(float(v)).replace("e", "E")
        out += [f"{n}*{t}"] if dialect.startswith("A") and n > 1 else [t] * n
    return out


def read_back(tokens):
    """The values a list-directed read gives: repeats expanded, each float() (Python's own)."""
    out = []
    for t in tokens:
        n, _, v = t.rpartition("*")
        out += [float(v)] * (int(n) if n else 1)
    return out


def lines(tokens, per_line, sep, width=0, trailing=""):
    return "\n".join(sep.join(t.rjust(width) for t in tokens[i:i + per_line]) + trailing
                     for i in range(0, len(tokens), per_line)) + "\n"


def write_formatted(path, grids, dialect, native=False, iblank=False, two_d=False):
    """grids: [(dims, [x, y, z])]. dialect: A (commas, repeats, header on one line with
    repeats), A1 (A's values, I5 header a block a line), B (3 a line, 24 wide, 3-digit
    exponents), C (5 a line, 15 wide, header wrapped 6 integers a line)."""
    d = 2 if two_d else 3
    dims_tokens = lambda dims: [str(x) for x in dims[:d]]  # noqa: E731
    sep, per, width, trail = {"A": (", ", 7, 0, ","), "A1": (", ", 5, 0, ","), "B": ("", 3, 24, ""), "C": ("", 5, 15, "")}[dialect]
    rep = dialect.startswith("A")
    read = []  # per block: x, y, z as the text gives them
    text = ""
    if not native:
        text += (f"{len(grids)}," if dialect == "A" else f"{len(grids):5d}") + "\n"
        all_dims = [t for dims, _ in grids for t in dims_tokens(dims)]
        if dialect == "A":  # one line, equal neighbours as repeats (as `2*29`)
            runs = [(v, len(list(g))) for v, g in itertools.groupby(all_dims)]
            text += ", ".join(f"{n}*{v}" if n > 1 else v for v, n in runs) + "\n"
        elif dialect == "C":
            text += lines([f"{int(t):12d}" for t in all_dims], 6, "")
        else:
            text += "".join("".join(f"{int(t):5d}" for t in dims_tokens(dims)) + "\n" for dims, _ in grids)
    for dims, xyz in grids:
        if native:
            text += "".join(f"{x:5d}" for x in dims[:d]) + "\n"
        values = [v for c in xyz[:d] for v in c]
        tokens = text_values(values, dialect)
        got = read_back(tokens)
        n = len(xyz[0])
        read.append([got[c * n:(c + 1) * n] for c in range(d)] + ([[0.0] * n] if d == 2 else []))
        if iblank:
            tokens += [f"{n}*1"] if rep else ["1"] * n
        text += lines(tokens, per, sep, width, trail)
    path.write_text(text)
    return [(dims, r) for (dims, _), r in zip(grids, read)]


def check_h5(path, grids, two_d=False):
    with h5py.File(path, "r") as f:
        off = f["blocks/offsets"][:]
        assert [tuple(x) for x in f["blocks/dims"][:].tolist()] == [dims for dims, _ in grids]
        for c, axis in enumerate("xyz"):
            ds = f[f"grid/{axis}"]
            assert ds.dtype == np.float64
            for b, (dims, xyz) in enumerate(grids):
                want = np.zeros(len(xyz[0])) if two_d and c == 2 else np.asarray(xyz[c], np.float64)
                np.testing.assert_array_equal(ds[off[b]:off[b + 1]], want, err_msg=f"block {b + 1} {axis}")


CASES = [
    ("A", {}), ("A1", {}), ("B", {}), ("C", {}),
    ("A1", {"native": True}), ("C", {"native": True}),
    ("A", {"iblank": True}), ("B", {"two_d": True}),
]


@pytest.mark.parametrize("dialect,kw", CASES, ids=lambda x: x if isinstance(x, str) else "-".join(x) or "plot3d")
def test_formatted_grids_through_info_balance_convert(ab, tmp_path, dialect, kw):
    rng = np.random.default_rng(7)
    dims = [(ni, nj, 1) for ni, nj, _ in DIMS] if kw.get("two_d") else DIMS[:1] if kw.get("native") and dialect == "C" else DIMS
    grids = [(d, coords(b, d, rng)) for b, d in enumerate(dims)]
    grid = tmp_path / "grid.fmt"  # a name that says nothing
    grids = write_formatted(grid, grids, dialect, **kw)  # the coordinates as the text holds them
    r = ab("info", grid, "--json", "--check")
    conftest.assert_status(r, 0)
    j = r.json()[0]
    assert (j["format"], j["form"], j["block_count"], j["iblank"], j["dimensions"]) == \
        ("blocks-plot3d", "formatted", len(dims), kw.get("iblank", False), 2 if kw.get("two_d") else 3)
    assert [tuple(b["dims"]) for b in j["blocks"]] == dims
    if kw.get("native") and len(dims) > 1:
        assert j["layout"].startswith("CFL3D")
    r = ab("balance", grid, "-n", 2, "--json")
    conftest.assert_status(r, 0)
    assert [tuple(g["cells"]) for g in r.json()["grid"]] == dims
    conftest.assert_status(ab("convert", grid, tmp_path / "g.h5"), 0)
    check_h5(tmp_path / "g.h5", grids, kw.get("two_d", False))


def test_a_repeat_across_two_arrays_and_a_repeated_dimension(ab, tmp_path):
    """`3*0.` covering the end of x and the start of y, `2*4` in the dimensions line, and what
    a read leaves on its last line (the 99 after the dimensions) not read."""
    x = [1.5, 2.5, 0.0, 0.0] * 4
    y = [0.0] + [float(i) for i in range(15)]
    z = [0.25] * 16
    text = "1\n1, 2*4, 99\n" + ", ".join(["1.5", "2.5", "2*0.", "1.5", "2.5", "2*0.", "1.5", "2.5", "2*0.", "1.5", "2.5", "3*0."]) + ",\n"
    text += ", ".join(repr(v) for v in y[1:]) + ", 16*.25\n"
    (tmp_path / "g.p3d").write_text(text)
    conftest.assert_status(ab("convert", tmp_path / "g.p3d", tmp_path / "g.h5"), 0)
    check_h5(tmp_path / "g.h5", [((1, 4, 4), [x, y, z])])


def native_binary(path, grids, big):
    e = ">" if big else "<"
    out = bytearray()
    for (j, k, i), xyz in grids:
        for body in (np.array([j, k, i], e + "i4").tobytes(), b"".join(np.asarray(c, e + "f4").tobytes() for c in xyz)):
            m = np.array([len(body)], e + "i4").tobytes()
            out += m + body + m
    path.write_bytes(bytes(out))


@pytest.mark.parametrize("big", [False, True])
def test_cfl3d_binary_layout(ab, tmp_path, big):
    rng = np.random.default_rng(3)
    grids = [(d, [np.asarray(c, np.float32) for c in coords(b, d, rng)]) for b, d in enumerate(DIMS)]
    native_binary(tmp_path / "grid.bin", grids, big)
    j = ab("info", tmp_path / "grid.bin", "--json").json()[0]
    assert (j["form"], j["precision"], j["byte_order"], j["layout"][:5]) == ("binary", "single", "big" if big else "little", "CFL3D")
    conftest.assert_status(ab("convert", tmp_path / "grid.bin", tmp_path / "g.h5"), 0)
    with h5py.File(tmp_path / "g.h5", "r") as f:
        off = f["blocks/offsets"][:]
        for b, (_, xyz) in enumerate(grids):
            np.testing.assert_array_equal(f["grid/y"][off[b]:off[b + 1]], xyz[1].astype(f["grid/y"].dtype))


def test_a_big_endian_multigrid_named_bin(ab, tmp_path):
    """A binary multi-grid file whose name says nothing (CFL3D's sduct.new.x.bin)."""
    e = ">"
    out = bytearray()

    def rec(b):
        m = np.array([len(b)], e + "i4").tobytes()
        out.extend(m + b + m)
    rng = np.random.default_rng(5)
    grids = [(d, coords(b, d, rng)) for b, d in enumerate(DIMS)]
    rec(np.array([len(grids)], e + "i4").tobytes())
    rec(np.array([d for d, _ in grids], e + "i4").tobytes())
    for _, xyz in grids:
        rec(b"".join(np.asarray(c, e + "f4").tobytes() for c in xyz))
    (tmp_path / "sduct.new.x.bin").write_bytes(bytes(out))
    j = ab("info", tmp_path / "sduct.new.x.bin", "--json").json()[0]
    assert (j["layout"], j["byte_order"], j["precision"]) == ("multi-grid", "big", "single")
    conftest.assert_status(ab("balance", tmp_path / "sduct.new.x.bin", "-n", 2), 0)
    conftest.assert_status(ab("convert", tmp_path / "sduct.new.x.bin", tmp_path / "s.h5"), 0)


def test_damaged_formatted_grids_are_named(ab, tmp_path):
    rng = np.random.default_rng(9)
    grids = [(d, coords(b, d, rng)) for b, d in enumerate(DIMS)]
    write_formatted(tmp_path / "g.fmt", grids, "B")
    text = (tmp_path / "g.fmt").read_text()
    # A value that is no number, in the second block.
    body = text.splitlines(keepends=True)
    first_block_lines = 2 + len(DIMS) + (3 * 2 * 5 * 4 + 2) // 3
    bad = body[:first_block_lines + 1] + [body[first_block_lines + 1].replace(".", "x", 1)] + body[first_block_lines + 2:]
    (tmp_path / "bad.fmt").write_text("".join(bad))
    r = ab("convert", tmp_path / "bad.fmt", tmp_path / "bad.h5")
    conftest.assert_status(r, 1, "bad.fmt", "block 2", "is not a number")
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "bad.h5").exists()
    r = ab("info", tmp_path / "bad.fmt", "--check")
    conftest.assert_status(r, 1, "block 2", "byte")
    # Cut short: the block and the count named.
    (tmp_path / "cut.fmt").write_text("".join(body[:-2]))
    for cmd in (("info", tmp_path / "cut.fmt"), ("balance", tmp_path / "cut.fmt", "-n", 2)):
        r = ab(*cmd)
        conftest.assert_status(r, 1, "cut.fmt", "block 3", "the file ends after")


def test_the_block_list_of_balance_is_not_taken_for_a_grid(ab, tmp_path):
    (tmp_path / "b.txt").write_text("1 10 10 10\n2 5 5 5\n")
    (tmp_path / "w.txt").write_text("1 5\n2 7\n3 9\n4 11\n5 13\n6 1\n7 2\n8 3\n9 4\n10 5\n11 6\n")
    r = ab("balance", tmp_path / "b.txt", "-n", 2, "--json")  # "id ni nj nk": blocks 1 and 2 as listed
    conftest.assert_status(r, 0)
    assert r.json()["grid"] == [{"id": 1, "cells": [10, 10, 10]}, {"id": 2, "cells": [5, 5, 5]}]
    r = ab("balance", tmp_path / "w.txt", "-n", 2, "--json")  # "id weight": 11 blocks, not a 2D grid of 1 x 5 points
    conftest.assert_status(r, 0)
    assert r.json()["blocks"] == 11 and "grid" not in r.json()


@pytest.mark.mpi
def test_parallel_convert_reads_the_text_once(ab, tmp_path):
    """`mpiexec -n 3 anabranch convert GRID out.h5` of a formatted grid: the coordinates as
    the serial convert gives them, and the header pass (which reads the whole text: a block's
    first value is found only by counting those before it) made by rank 0 alone (the bytes
    each rank read, measured from outside: bench/rank_probe.py)."""
    rng = np.random.default_rng(3)
    dims = [(20, 20, 15)] * 6  # two blocks a rank, values that do not repeat
    grids = write_formatted(tmp_path / "grid.fmt", [(d, list(rng.random((3, 6000)) * 100)) for d in dims], "A")
    size = (tmp_path / "grid.fmt").stat().st_size
    probe = pathlib.Path(__file__).resolve().parents[2] / "bench" / "rank_probe.py"
    (tmp_path / "probe").mkdir()
    proc = conftest.mpirun(3, sys.executable, probe, tmp_path / "probe", conftest.EXE, "convert", tmp_path / "grid.fmt",
                           tmp_path / "g.h5", env={"ANABRANCH_PROGRESS": "0"})
    conftest.assert_status(proc, 0)
    check_h5(tmp_path / "g.h5", grids)
    read = {r["rank"]: r["read"] for r in (json.loads(p.read_text()) for p in (tmp_path / "probe").glob("rank.*.json"))}
    assert sorted(read) == [0, 1, 2]
    # What a rank reads besides (MPI's start, HDF5's output) is about the same on every rank:
    # rank 0 alone has the header pass on top.
    for rank in (1, 2):
        assert read[0] - read[rank] > 0.8 * size, (rank, read, size)
