"""PLOT3D solutions as frames: q files (a record of Mach number, angle of attack, Reynolds
number and time per block, then density, momentum and energy) and function files (a count of
variables per block), in every binary form numpy writes here (Fortran records or C binary,
either byte order, single or double, multi- or single-grid, 3D and 2D) and formatted
(Fortran list-directed text), described by `info`
and converted with their grid (`convert GRID out.h5 --solution Q ...`, one frame each), every
value compared through h5py; under mpiexec the same values; mismatches refused in one line."""
import itertools
import json
import pathlib
import sys

import numpy as np
import pytest

import conftest

pytestmark = pytest.mark.formats
h5py = pytest.importorskip("h5py")

DIMS = [(4, 3, 2), (2, 5, 3)]


def fortran_file(path, parts, records, order):
    """parts: a list of numpy arrays, each one record (or, without records, back to back)."""
    out = bytearray()
    for p in parts:
        data = np.ascontiguousarray(p).tobytes()
        marker = np.array([len(data)], order + "i4").tobytes()
        out += (marker + data + marker) if records else data
    path.write_bytes(bytes(out))


def write_grid(path, dims, two_d=False, order="<", records=True):
    nd = 2 if two_d else 3
    parts = [np.array([len(dims)], order + "i4"), np.array([d[:nd] for d in dims], order + "i4").ravel()]
    for b, d in enumerate(dims):
        n = int(np.prod(d))
        parts.append(np.concatenate([np.arange(n) + 100 * b + 10 * c for c in range(nd)]).astype(order + "f8"))
    fortran_file(path, parts, records, order)


def solution(dims, nvar, seed):
    rng = np.random.default_rng(seed)
    return [rng.random((nvar, int(np.prod(d)))) * 10 - 5 for d in dims]


def write_solution(path, dims, values, order="<", real="f8", records=True, multi=True, two_d=False, function=False, head=None):
    nd = 2 if two_d else 3
    per = [list(d[:nd]) + ([len(values[0])] if function else []) for d in dims]
    parts = ([np.array([len(dims)], order + "i4")] if multi else []) + [np.array(per, order + "i4").ravel()]
    for b, v in enumerate(values):
        if not function:
            parts.append(np.array(head[b] if head else [0.5, 2.0, 1e6, 3.25], order + real))
        parts.append(np.asarray(v, order + real).ravel())
    fortran_file(path, parts, records, order)


FORMS = [dict(), dict(order=">"), dict(real="f4"), dict(records=False), dict(order=">", real="f4", records=False),
         dict(two_d=True), dict(function=True), dict(function=True, order=">", real="f4")]


@pytest.mark.parametrize("form", FORMS, ids=lambda f: "-".join(f"{k}={v}" for k, v in f.items()) or "default")
def test_q_and_function_files_as_frames(ab, tmp_path, form):
    two_d, function = form.get("two_d", False), form.get("function", False)
    dims = [(ni, nj, 1) for ni, nj, _ in DIMS] if two_d else DIMS
    nvar = 3 if function else (4 if two_d else 5)
    write_grid(tmp_path / "g.x", dims, two_d)
    frames = [solution(dims, nvar, s) for s in (1, 2)]
    heads = [[[0.75, 1.5, 2e6, 10.0 * (f + 1)]] * len(dims) for f in range(2)]
    for f, values in enumerate(frames):
        write_solution(tmp_path / f"s{f}.q", dims, values, head=heads[f], **form)
    r = ab("info", tmp_path / "s0.q", "--json", "--check")
    conftest.assert_status(r, 0)
    j = r.json()[0]
    assert (j["format"], j["kind"], j["block_count"], j["frames"], j["dimensions"]) == \
        ("blocks-plot3d-solution", "function" if function else "q", len(dims), 1, 2 if two_d else 3)
    assert (j["precision"], j["byte_order"], j["records"]) == \
        ("single" if form.get("real") == "f4" else "double", "big" if form.get("order") == ">" else "little",
         "fortran" if form.get("records", True) else "none")
    assert [tuple(b["dims"]) for b in j["blocks"]] == dims
    if function:
        assert j["variables"] == ["function 1", "function 2", "function 3"] and "free_stream" not in j
    else:
        assert j["variables"][0] == "Density" and j["variables"][-1] == "EnergyStagnationDensity" and len(j["variables"]) == nvar
        assert j["free_stream"] == {"mach": 0.75, "alpha": 1.5, "reynolds": 2e6, "time": 10.0}
    r = ab("convert", tmp_path / "g.x", tmp_path / "out.h5", "--solution", tmp_path / "s0.q", "--solution", tmp_path / "s1.q")
    conftest.assert_status(r, 0)
    check_frames(tmp_path / "out.h5", j["variables"], frames, None if function else [10.0, 20.0], form.get("real") == "f4")


def check_frames(path, names, frames, times, single):
    with h5py.File(path) as f:
        off = f["blocks/offsets"][:]
        keys = sorted(f["frames"])
        assert len(keys) == len(frames)
        for k, (key, values) in enumerate(zip(keys, frames)):
            if times:
                assert f["frames"][key].attrs["time"] == times[k]
            for v, name in enumerate(names):
                got = f["frames"][key][name][:]
                for b, block in enumerate(values):
                    want = block[v].astype(np.float32) if single else block[v]
                    np.testing.assert_array_equal(got[off[b]:off[b + 1]], want, err_msg=f"frame {k} {name} block {b + 1}")


@pytest.mark.mpi
def test_parallel_convert_with_solutions(tmp_path):
    """Under mpiexec (3 ranks, 2 blocks: one rank holds none) the frames hold the same values."""
    write_grid(tmp_path / "g.x", DIMS)
    values = solution(DIMS, 5, 4)
    write_solution(tmp_path / "s.q", DIMS, values)
    conftest.assert_status(conftest.mpirun(3, conftest.EXE, "convert", tmp_path / "g.x", tmp_path / "p.h5", "--solution", tmp_path / "s.q"), 0)
    names = ["Density", "MomentumX", "MomentumY", "MomentumZ", "EnergyStagnationDensity"]
    check_frames(tmp_path / "p.h5", names, [values], [3.25], False)


def test_mismatches_are_refused(ab, tmp_path):
    write_grid(tmp_path / "g.x", DIMS)
    other = [DIMS[0], (2, 5, 4)]
    write_solution(tmp_path / "other.q", other, solution(other, 5, 1))
    r = ab("convert", tmp_path / "g.x", tmp_path / "o.h5", "--solution", tmp_path / "other.q")
    conftest.assert_status(r, 1, "other.q: block 2 is 2 x 5 x 4, the grid's 2 x 5 x 3")
    assert not (tmp_path / "o.h5").exists()
    write_solution(tmp_path / "q.q", DIMS, solution(DIMS, 5, 1))
    write_solution(tmp_path / "f.q", DIMS, solution(DIMS, 2, 1), function=True)
    r = ab("convert", tmp_path / "g.x", tmp_path / "o.h5", "--solution", tmp_path / "q.q", "--solution", tmp_path / "f.q")
    conftest.assert_status(r, 1, "f.q: 2 variables (a function file)")
    data = (tmp_path / "q.q").read_bytes()
    (tmp_path / "cut.q").write_bytes(data[:-4])
    r = ab("convert", tmp_path / "g.x", tmp_path / "o.h5", "--solution", tmp_path / "cut.q")
    conftest.assert_status(r, 1, "cut.q", "not a PLOT3D q or function file")
    # The output is a solution it reads, by another spelling: refused, the input intact.
    (tmp_path / "q.h5").write_bytes(data)
    r = ab("convert", tmp_path / "g.x", f"{tmp_path}/./q.h5", "--solution", tmp_path / "q.h5")
    conftest.assert_status(r, 1, "an input of this command")
    assert (tmp_path / "q.h5").read_bytes() == data and sorted(p.name for p in tmp_path.glob("q.h5*")) == ["q.h5"]
    write_solution(tmp_path / "f2.q", DIMS, solution(DIMS, 2, 1), function=True)
    r = ab("convert", tmp_path / "f2.q", tmp_path / "o.h5", "--solution", tmp_path / "q.q")
    conftest.assert_status(r, 1, "--solution goes with a PLOT3D grid")
    assert not (tmp_path / "o.h5").exists()


def write_formatted_solution(path, dims, values, two_d=False, function=False, multi=True, head=None):
    """A formatted (list-directed) q or function file: the block count, the dimensions in one
    read, then per block the 4 header values in a read and the values in another, 5 a line,
    17 digits, exponents with D, runs of equal values as r*v."""
    nd = 2 if two_d else 3
    lines = [f"{len(dims)}"] if multi else []
    lines.append(" ".join(str(x) for d in dims for x in list(d[:nd]) + ([len(values[0])] if function else [])))
    for b, v in enumerate(values):
        if not function:
            lines.append("  ".join(repr(float(x)) for x in (head[b] if head else [0.5, 2.0, 1e6, 3.25])))
        toks = []
        for x, run in itertools.groupby(np.asarray(v).ravel()):
            n, t = len(list(run)), repr(float(x)).replace("e", "D")
            toks += [f"{n}*{t}"] if n > 1 else [t]
        lines += [", ".join(toks[i:i + 5]) for i in range(0, len(toks), 5)]
    path.write_text("\n".join(lines) + "\n")


FORMATTED = [dict(), dict(two_d=True, multi=False), dict(function=True)]


@pytest.mark.parametrize("form", FORMATTED, ids=lambda f: "-".join(f"{k}={v}" for k, v in f.items()) or "default")
def test_formatted_q_and_function_files_as_frames(ab, tmp_path, form):
    """Formatted q and function files (CFL3D writes them with ibin = 0): described by `info`
    as formatted, and converted with their grid, every value as Python's float() reads it."""
    two_d, function = form.get("two_d", False), form.get("function", False)
    dims = [(ni, nj, 1) for ni, nj, _ in DIMS] if two_d else DIMS
    if not form.get("multi", True):
        dims = dims[:1]
    nvar = 2 if function else (4 if two_d else 5)
    write_grid(tmp_path / "g.x", dims, two_d)
    frames = [solution(dims, nvar, s) for s in (5, 6)]
    for values in frames:
        for v in values:
            v[:, 1] = v[:, 0]  # a repeat in every variable
    heads = [[[0.75, 1.5, 2e6, 10.0 * (f + 1)]] * len(dims) for f in range(2)]
    for f, values in enumerate(frames):
        write_formatted_solution(tmp_path / f"s{f}.q", dims, values, head=heads[f], **form)
    r = ab("info", tmp_path / "s0.q", "--json", "--check")
    conftest.assert_status(r, 0)
    j = r.json()[0]
    assert (j["format"], j["kind"], j["form"], j["precision"], j["block_count"], j["dimensions"]) == \
        ("blocks-plot3d-solution", "function" if function else "q", "formatted", "text", len(dims), 2 if two_d else 3)
    assert [tuple(b["dims"]) for b in j["blocks"]] == dims
    if not function:
        assert j["free_stream"] == {"mach": 0.75, "alpha": 1.5, "reynolds": 2e6, "time": 10.0}
    r = ab("convert", tmp_path / "g.x", tmp_path / "out.h5", "--solution", tmp_path / "s0.q", "--solution", tmp_path / "s1.q")
    conftest.assert_status(r, 0)
    check_frames(tmp_path / "out.h5", j["variables"], frames, None if function else [10.0, 20.0], False)


def test_a_damaged_formatted_solution_is_named(ab, tmp_path):
    """A value that is no number: one line naming the file, the block, variable and value, and
    the byte; a value missing: refused as no reading of the file."""
    write_grid(tmp_path / "g.x", DIMS)
    write_formatted_solution(tmp_path / "s.q", DIMS, solution(DIMS, 5, 7))
    text = (tmp_path / "s.q").read_text().splitlines()
    bad = text[:4] + [text[4].replace(",", ", x1.5,", 1)] + text[5:]
    (tmp_path / "bad.q").write_text("\n".join(bad) + "\n")
    r = ab("convert", tmp_path / "g.x", tmp_path / "o.h5", "--solution", tmp_path / "bad.q")
    at = (tmp_path / "bad.q").read_bytes().index(b"x1.5")  # the 7th value: line 5's second
    conftest.assert_status(r, 1, "bad.q", f"block 1 variable 1 value 7 at byte {at}:", "'x1.5' is not a number")
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "o.h5").exists()
    (tmp_path / "cut.q").write_text("\n".join(text[:-1]) + "\n")
    r = ab("info", tmp_path / "cut.q")
    conftest.assert_status(r, 1, "cut.q")


@pytest.mark.mpi
def test_parallel_convert_reads_a_formatted_solution_once(tmp_path):
    """Under mpiexec (3 ranks) a formatted q file's header pass (the whole text: a block's first
    value is found by counting those before it) is rank 0's alone (the bytes each rank read,
    measured from outside: bench/rank_probe.py); every rank reads its own blocks' lines."""
    dims = [(20, 20, 15)] * 6
    values = solution(dims, 5, 8)
    write_grid(tmp_path / "g.x", dims)
    write_formatted_solution(tmp_path / "s.q", dims, values)
    size = (tmp_path / "s.q").stat().st_size
    probe = pathlib.Path(__file__).resolve().parents[2] / "bench" / "rank_probe.py"
    (tmp_path / "probe").mkdir()
    proc = conftest.mpirun(3, sys.executable, probe, tmp_path / "probe", conftest.EXE, "convert", tmp_path / "g.x",
                           tmp_path / "p.h5", "--solution", tmp_path / "s.q", env={"ANABRANCH_PROGRESS": "0"})
    conftest.assert_status(proc, 0)
    names = ["Density", "MomentumX", "MomentumY", "MomentumZ", "EnergyStagnationDensity"]
    check_frames(tmp_path / "p.h5", names, [values], [3.25], False)
    read = {r["rank"]: r["read"] for r in (json.loads(p.read_text()) for p in (tmp_path / "probe").glob("rank.*.json"))}
    assert sorted(read) == [0, 1, 2]
    for rank in (1, 2):
        assert read[0] - read[rank] > 0.8 * size, (rank, read, size)
        assert read[rank] > size / 3 * 0.9, (rank, read, size)  # its own two blocks' lines
