"""PLOT3D grids and solutions drawn at random, against what Python itself reads from the
bytes written here. Formatted files in any dialect Fortran list-directed output and input
allow: numbers with E, D, e, d or no exponent letter (1.5-100), fixed or scientific, with or
without a leading zero or sign; repeat counts (r*v) anywhere, across arrays and, when one
WRITE holds the whole grid, across blocks; line breaks anywhere, blanks or commas; IBLANK;
2D and 3D; the block count first, one block alone, or CFL3D's dimensions before each block.
Binary files in every form (records or none, byte order, precision, IBLANK, 2D/3D, multi-
or single-grid, CFL3D's layout). Solutions (q and function files) as frames with their grid.
Each through `info --check` and `convert` (alone and on 1 to 3 ranks), every value compared
with h5py; a damaged value named by its block and byte."""
import re

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import conftest
import gen

pytestmark = [pytest.mark.formats, pytest.mark.generated]
h5py = pytest.importorskip("h5py")


def fortran_real(token):
    """The value a Fortran list-directed read gives for a real's text (Python's float() after
    Fortran's spellings: D for E, an exponent with its sign alone)."""
    t = token.upper().replace("D", "E")
    if "E" not in t:
        m = re.match(r"^([+-]?[0-9.]+)([+-][0-9]+)$", t)
        if m:
            t = m.group(1) + "E" + m.group(2)
    return float(t)


def real_text(v, rng, first=False):
    """One of the ways a Fortran program writes v (and reads it back)."""
    kind = rng.integers(0, 9)
    p = int(rng.integers(0, 17))
    if kind == 0:
        t = repr(float(v))
    elif kind in (1, 2, 3, 4):
        t = f"{v:.{p}E}"
        t = t.replace("E", ["E", "D", "e", "d"][kind - 1])
    elif kind == 5:  # the exponent's sign alone (Fortran's Ew.d past 99: a decimal point always)
        m, e = f"{v:.{max(p, 1)}E}".split("E")
        t = m + (e if e[0] in "+-" else "+" + e)
    elif kind == 6:
        t = f"{v:.{min(p, 8)}f}"
        if "." not in t:
            t += "."
    elif kind == 7:  # .5 and -.5
        t = f"{v:.{min(p, 8) + 1}f}"
        t = t.replace("0.", ".", 1) if t.startswith(("0.", "-0.")) else t
    else:
        t = ("+" if v >= 0 else "") + f"{v:.{p}E}"
    return t


def values_pool(n, rng):
    """n doubles: random magnitudes and signs, with runs of equal values (repeats to find)."""
    pool = np.concatenate([rng.uniform(-1, 1, 6) * 10.0 ** rng.integers(-6, 7, 6), [0.0, 1.0, -2.5]])
    out = np.where(rng.random(n) < 0.5, rng.choice(pool, n), rng.uniform(-1, 1, n) * 10.0 ** rng.integers(-8, 9, n))
    # runs: some values copied over the next few
    for at in np.flatnonzero(rng.random(n) < 0.15):
        out[at:at + int(rng.integers(2, 7))] = out[at]
    return out


def tokens_of(values, rng, integers=False, repeats=True):
    """The tokens of one array (reals, or integers for IBLANK): equal neighbours may be written
    r*v. Returns [(text, [values it stands for])]."""
    out = []
    i = 0
    while i < len(values):
        j = i + 1
        while repeats and j < len(values) and values[j] == values[i] and rng.random() < 0.9:
            j += 1
        text = str(int(values[i])) if integers else real_text(values[i], rng)
        val = int(text) if integers else fortran_real(text)
        if j - i > 1 and rng.random() < 0.8:
            out.append((f"{j - i}*{text}", [val] * (j - i)))
        else:
            out += [(text, [val])] + [(text, [val]) for _ in range(j - i - 1)]
        i = j
    return out


class Text:
    """A text file built a read at a time; each token's byte offset kept."""

    def __init__(self, rng, comma, width, breaks):
        self.rng, self.comma, self.width, self.breaks = rng, comma, width, breaks
        self.text, self.at = "", []

    def read(self, tokens, keep_line_for=()):
        """One list-directed WRITE: tokens with separators and line breaks at random; ends its
        line. keep_line_for: token indices before which no line break may fall."""
        line_start = True
        for k, tok in enumerate(tokens):
            if not line_start:
                if k not in keep_line_for and self.rng.random() < self.breaks:
                    self.text += ("," if self.comma and self.rng.random() < 0.5 else "") + "\n"
                    line_start = True
                else:
                    self.text += ", " if self.comma and self.rng.random() < 0.7 else " " * int(self.rng.integers(1, 3))
            if line_start and self.rng.random() < 0.3:
                self.text += " "
            text = tok.rjust(self.width) if self.width else tok
            self.at.append(len(self.text.encode()) + len(text) - len(tok))
            self.text += text
            line_start = False
        self.text += ("," if self.comma and self.rng.random() < 0.3 else "") + "\n"


def formatted_grid(rng, layout, d, iblank, nblocks):
    """A formatted grid: (text, blocks' dims, per block [x, y, z] as Python reads them, where
    (block, coordinate, value) -> byte of the token that starts it)."""
    dims = [tuple(int(x) for x in rng.integers(1, 6, d)) + ((1,) if d == 2 else ()) for _ in range(nblocks)]
    if layout != "multi":
        dims = dims[:1] if layout == "single" else dims
    txt = Text(rng, comma=bool(rng.integers(0, 2)), width=int(rng.choice([0, 0, 12, 24])), breaks=float(rng.choice([0.05, 0.2, 0.5])))
    blocks_tokens = []
    want = []
    for b, dm in enumerate(dims):
        n = int(np.prod(dm))
        t = tokens_of(values_pool(n * d, rng), rng)
        if iblank:
            t += tokens_of(rng.choice([1, 1, 1, 0, -1, 2], n), rng, integers=True)
        blocks_tokens.append(t)
        got = [v for _, vs in t for v in vs]
        want.append([np.array(got[c * n:(c + 1) * n]) for c in range(d)] + ([np.zeros(n)] if d == 2 else []))
    if layout == "multi":
        txt.read([str(len(dims))])
        dim_tokens = [str(x) for dm in dims for x in dm[:d]]
        txt.read(dim_tokens)
    where = []  # per block: the byte offset of each token
    for b, t in enumerate(blocks_tokens):
        if layout != "multi":  # one block's dimensions on a line of their own, before its values
            txt.read([str(x) for x in dims[b][:d]], keep_line_for=set(range(d)))
        first = len(txt.at)
        txt.read([tok for tok, _ in t])
        where.append(txt.at[first:])
    return txt.text, dims, want, (blocks_tokens, where)


def stream_text(rng, dims, d, iblank):
    """A grid written by one WRITE for every block: the block count and dimensions first, then
    every block's values in one read, a repeat now and then running from one block into the
    next, and at least one block starting on the line where the one before ended."""
    txt = Text(rng, comma=bool(rng.integers(0, 2)), width=0, breaks=float(rng.choice([0.05, 0.2])))
    txt.read([str(len(dims))])
    txt.read([str(x) for dm in dims for x in dm[:d]])
    values, want = [], []
    for dm in dims:
        n = int(np.prod(dm))
        flat = values_pool(n * d, rng)
        block = [(v, False) for v in flat] + ([(int(x), True) for x in rng.choice([1, 0], n)] if iblank else [])
        values.append(block)
    # a repeat across the boundary: the last value of a block equal to the first of the next
    for b in range(len(values) - 1):
        if rng.random() < 0.5 and not iblank:
            values[b + 1][0] = values[b][-1]
    tokens, i = [], 0
    flat = [v for blk in values for v in blk]
    bounds = set(np.cumsum([len(b) for b in values])[:-1].tolist())
    while i < len(flat):
        j = i + 1
        while j < len(flat) and flat[j] == flat[i] and rng.random() < 0.9:
            j += 1
        v, is_int = flat[i]
        text = str(v) if is_int else real_text(v, rng)
        val = int(text) if is_int else fortran_real(text)
        tokens.append((f"{j - i}*{text}" if j - i > 1 else text, [val] * (j - i), i))
        i = j
    # no line break right before the token that starts a block (when a block starts on a token)
    no_break = {k for k, (_, _, at) in enumerate(tokens) if at in bounds}
    txt.read([t for t, _, _ in tokens], keep_line_for=no_break)
    got = [v for _, vs, _ in tokens for v in vs]
    start = 0
    for dm in dims:
        n = int(np.prod(dm))
        want.append([np.array(got[start + c * n:start + (c + 1) * n], dtype=float) for c in range(d)] + ([np.zeros(n)] if d == 2 else []))
        start += n * (d + (1 if iblank else 0))
    return txt.text, want


def check_h5(path, dims, want):
    with h5py.File(path, "r") as f:
        off = f["blocks/offsets"][:]
        assert [tuple(int(v) for v in x) for x in f["blocks/dims"][:]] == [tuple(x) for x in dims]
        for c, axis in enumerate("xyz"):
            for b in range(len(dims)):
                np.testing.assert_array_equal(f[f"grid/{axis}"][off[b]:off[b + 1]], want[b][c], err_msg=f"block {b + 1} {axis}")


@gen.cases(30)
@given(seed=st.integers(0, 2**32 - 1), layout=st.sampled_from(["multi", "single", "native"]), d=st.sampled_from([2, 3]),
       iblank=st.booleans(), nblocks=st.integers(1, 4), ranks=st.integers(0, 3))
def test_formatted_grid_in_any_dialect(seed, layout, d, iblank, nblocks, ranks):
    """A grid a block per read, in a dialect drawn at random: info names its layout and dialect,
    convert (alone, or on 1 to 3 ranks) gives Python's values."""
    rng = np.random.default_rng(seed)
    if layout == "native":
        d = 3  # CFL3D's layout is 3D
        iblank = False
    text, dims, want, _ = formatted_grid(rng, layout, d, iblank, nblocks)
    with gen.scratch() as tmp:
        grid = tmp / "grid.fmt"
        grid.write_text(text)
        r = gen.ab("info", grid, "--json", "--check")
        conftest.assert_status(r, 0)
        j = r.json()[0]
        assert (j["format"], j["form"], j["dimensions"], j["iblank"]) == ("blocks-plot3d", "formatted", d, iblank), text[:400]
        assert [tuple(b["dims"]) for b in j["blocks"]] == [tuple(x) for x in dims]
        assert j["dialect"].startswith("a read per block")
        assert j["layout"] == {"multi": "multi-grid", "single": "single-grid"}.get(
            layout, "CFL3D (dimensions before each block, no count)" if len(dims) > 1 else "single-grid")
        out = tmp / "g.h5"
        r = conftest.mpirun(ranks, conftest.EXE, "convert", grid, out) if ranks else gen.ab("convert", grid, out)
        conftest.assert_status(r, 0)
        check_h5(out, dims, want)


@gen.cases(20)
@given(seed=st.integers(0, 2**32 - 1), d=st.sampled_from([2, 3]), iblank=st.booleans(), nblocks=st.integers(2, 5),
       ranks=st.integers(0, 3))
def test_formatted_grid_written_by_one_write(seed, d, iblank, nblocks, ranks):
    """Every block's values in one WRITE: blocks start on the line where the one before ended,
    a repeat may run from one block into the next. Read as one read; info names it."""
    rng = np.random.default_rng(seed)
    dims = [tuple(int(x) for x in rng.integers(1, 5, d)) + ((1,) if d == 2 else ()) for _ in range(nblocks)]
    text, want = stream_text(rng, dims, d, iblank)
    with gen.scratch() as tmp:
        grid = tmp / "grid.txt"
        grid.write_text(text)
        r = gen.ab("info", grid, "--json", "--check")
        conftest.assert_status(r, 0)
        j = r.json()[0]
        assert (j["layout"], j["dimensions"], j["iblank"]) == ("multi-grid", d, iblank), text[:600]
        assert [tuple(b["dims"]) for b in j["blocks"]] == dims
        out = tmp / "g.h5"
        r = conftest.mpirun(ranks, conftest.EXE, "convert", grid, out) if ranks else gen.ab("convert", grid, out)
        conftest.assert_status(r, 0)
        check_h5(out, dims, want)
        if j["dialect"].startswith("a read per block"):  # every block happened to start a line: read either way
            return
        assert j["dialect"].startswith("one read for every block")
        r = gen.ab("info", grid)
        assert "values: one read for every block" in r.stdout, r.stdout


@gen.cases(15)
@given(seed=st.integers(0, 2**32 - 1), layout=st.sampled_from(["multi", "single", "native"]), nblocks=st.integers(1, 3),
       damage=st.sampled_from(["word", "nan", "inf"]))
def test_a_damaged_formatted_value_is_named(seed, layout, nblocks, damage):
    """A value that is no number: info --check and convert name its block, coordinate, value
    and byte; a NaN or an infinity: info --check names its block, coordinate and point."""
    rng = np.random.default_rng(seed)
    text, dims, want, (blocks_tokens, where) = formatted_grid(rng, layout, 3, False, nblocks)
    b = int(rng.integers(0, len(dims)))
    singles = [k for k, (tok, vals) in enumerate(blocks_tokens[b]) if "*" not in tok and (b > 0 or k > 0)]
    assume(singles)
    k = int(rng.choice(singles))
    value = sum(len(vs) for _, vs in blocks_tokens[b][:k])  # values of the block before it
    n = int(np.prod(dims[b]))
    c, i = divmod(value, n)
    bad = {"word": "1.5.2", "nan": "NaN", "inf": "-Infinity"}[damage]
    raw = text.encode()
    at = where[b][k]
    old = blocks_tokens[b][k][0]
    assert raw[at:at + len(old)] == old.encode()
    raw = raw[:at] + bad.encode() + raw[at + len(old):]
    with gen.scratch() as tmp:
        grid = tmp / "bad.fmt"
        grid.write_bytes(raw)
        r = gen.ab("info", grid, "--check")
        conftest.assert_status(r, 1)
        if damage == "word":
            assert f"block {b + 1} coordinate {'xyz'[c]} value {i + 1}" in r.stderr and f"byte {at}" in r.stderr, (r.stderr, at)
            r = gen.ab("convert", grid, tmp / "out.h5")
            conftest.assert_status(r, 1, f"block {b + 1} coordinate {'xyz'[c]} value {i + 1}")
            assert not (tmp / "out.h5").exists()
        else:
            ni, nj = dims[b][0], dims[b][1]
            point = f"({i % ni + 1}, {i // ni % nj + 1}, {i // (ni * nj) + 1})"
            assert f"block {b + 1}, {'xyz'[c]} at point {point}" in r.stderr, (r.stderr, point)
        assert r.stderr.count("\n") == 1, r.stderr


def binary_readings(data):
    """Every binary grid layout (docs/formats/plot3d.md) whose header and size explain the bytes:
    [(records, order, multi, d, real bytes, iblank)]. Written here from the format's rules."""
    out = []
    size = len(data)
    for records in (True, False):
        for order in "<>":
            def word(at):
                return int(np.frombuffer(data[at:at + 4], order + "i4")[0]) if at + 4 <= size else -1
            for multi in (True, False):
                for d in (3, 2):
                    at, nb = 0, 1
                    if multi:
                        if records and word(0) != 4:
                            continue
                        nb = word(4 if records else 0)
                        if not 1 <= nb <= 10000:
                            continue
                        at = 12 if records else 4
                    if records and word(at) != nb * d * 4:
                        continue
                    at += 4 if records else 0
                    if at + nb * d * 4 > size:
                        continue
                    dims = [[word(at + (b * d + a) * 4) for a in range(d)] for b in range(nb)]
                    if any(not 1 <= x <= 1 << 24 for dm in dims for x in dm):
                        continue
                    at += nb * d * 4 + (4 if records else 0)
                    for rb in (8, 4):
                        for ib in (False, True):
                            p = at
                            ok = True
                            for dm in dims:
                                n = int(np.prod(dm)) * (d * rb + (4 if ib else 0))
                                if records and word(p) != n:
                                    ok = False
                                    break
                                p += n + (8 if records else 0)
                            if ok and p == size:
                                out.append((records, order, multi, d, rb, ib))
    return out


@gen.cases(30)
@given(seed=st.integers(0, 2**32 - 1), records=st.booleans(), order=st.sampled_from("<>"), multi=st.booleans(),
       d=st.sampled_from([2, 3]), real=st.sampled_from(["f4", "f8"]), iblank=st.booleans(), nblocks=st.integers(1, 4),
       native=st.booleans(), ranks=st.integers(0, 3))
def test_binary_grid_in_any_form(seed, records, order, multi, d, real, iblank, nblocks, native, ranks):
    """Binary grids in every form: info names the form; convert gives numpy's values (a file
    that two forms explain, which its bytes cannot tell apart, is left out)."""
    rng = np.random.default_rng(seed)
    if not multi:
        nblocks = 1
    dims = [[int(x) for x in rng.integers(1, 6, d)] for _ in range(nblocks)]
    values = [rng.uniform(-1, 1, (d, int(np.prod(dm)))) * 10.0 ** rng.integers(-3, 4) for dm in dims]
    if native:  # CFL3D's layout: per block "jdim kdim idim" and its x, y, z; records, 3D, no IBLANK, no count
        d, iblank, records = 3, False, True
        dims = [[int(x) for x in rng.integers(1, 6, 3)] for _ in range(nblocks)]
        values = [rng.uniform(-1, 1, (3, int(np.prod(dm)))) for dm in dims]
        parts = []
        for dm, v in zip(dims, values):
            parts += [np.array(dm, order + "i4"), np.asarray(v, order + real).ravel()]
    else:
        parts = ([np.array([nblocks], order + "i4")] if multi else []) + [np.array(dims, order + "i4").ravel()]
        for dm, v in zip(dims, values):
            blk = np.asarray(v, order + real).tobytes()
            if iblank:
                blk += rng.integers(-1, 3, int(np.prod(dm))).astype(order + "i4").tobytes()
            parts.append(blk)
    data = gen.fortran_records(parts, order, records=records)
    if not native:
        readings = binary_readings(data)
        assert (records, order, multi, d, int(real[1]), iblank) in readings
        assume(len(readings) == 1)
    with gen.scratch() as tmp:
        grid = tmp / "grid.bin"
        grid.write_bytes(data)
        r = gen.ab("info", grid, "--json", "--check")
        conftest.assert_status(r, 0)
        j = r.json()[0]
        assert (j["form"], j["dimensions"], j["iblank"], j["precision"], j["byte_order"], j["records"]) == \
            ("binary", d, iblank, "double" if real == "f8" else "single", "little" if order == "<" else "big",
             "fortran" if records else "none")
        full = [tuple(dm) + ((1,) if d == 2 else ()) for dm in dims]
        assert [tuple(b["dims"]) for b in j["blocks"]] == full
        if native and nblocks > 1:
            assert j["layout"].startswith("CFL3D")
        out = tmp / "g.h5"
        r = conftest.mpirun(ranks, conftest.EXE, "convert", grid, out) if ranks else gen.ab("convert", grid, out)
        conftest.assert_status(r, 0)
        want = [[np.asarray(v[c], order + real).astype(float) for c in range(d)] + ([np.zeros(v.shape[1])] if d == 2 else [])
                for v in values]
        check_h5(out, full, want)
        # a NaN in a coordinate: info --check names the block, the coordinate, the point and its byte
        b = int(rng.integers(0, nblocks))
        c = int(rng.integers(0, d))
        i = int(rng.integers(0, int(np.prod(dims[b]))))
        rb = int(real[1])
        head = len(gen.fortran_records(parts[:(0 if native else (2 if multi else 1))], order, records=records))
        at = head
        for k in range(b):
            at += (8 if records else 0) + int(np.prod(dims[k])) * (d * rb + (4 if iblank else 0)) + (20 if native else 0)
        at += (20 if native else 0) + (4 if records else 0) + (c * int(np.prod(dims[b])) + i) * rb
        bad = bytearray(data)
        bad[at:at + rb] = np.array([np.nan], order + real).tobytes()
        (tmp / "bad.bin").write_bytes(bytes(bad))
        dm = full[b]
        point = f"({i % dm[0] + 1}, {i // dm[0] % dm[1] + 1}, {i // (dm[0] * dm[1]) + 1})"
        conftest.assert_status(gen.ab("info", tmp / "bad.bin", "--check"), 1, f"block {b + 1}, {'xyz'[c]} at point {point}",
                               f"byte {at}")


def solution_bytes(rng, dims, d, function, nvar, form):
    """A q or function file in a form drawn at random: (bytes, [per block (nvar, n)] values as
    read, time)."""
    order, real, records, multi, formatted = form
    head = [float(x) for x in rng.uniform(0, 5, 4)]
    vals = [rng.uniform(-1, 1, (nvar, int(np.prod(dm)))) * 10.0 ** rng.integers(-4, 5) for dm in dims]
    per = [list(dm[:d]) + ([nvar] if function else []) for dm in dims]
    if formatted:
        txt = Text(rng, comma=bool(rng.integers(0, 2)), width=0, breaks=0.2)
        if multi:
            txt.read([str(len(dims))])
        txt.read([str(x) for p in per for x in p])
        got = []
        heads = []
        for v in vals:
            if not function:
                ht = [real_text(h, rng) for h in head]
                heads.append([fortran_real(t) for t in ht])
                txt.read(ht)
            t = tokens_of(v.ravel(), rng)
            txt.read([tok for tok, _ in t])
            got.append(np.array([x for _, xs in t for x in xs]).reshape(nvar, -1))
        return txt.text.encode(), got, (heads[0][3] if heads else 0.0)
    parts = ([np.array([len(dims)], order + "i4")] if multi else []) + [np.array(per, order + "i4").ravel()]
    for v in vals:
        if not function:
            parts.append(np.array(head, order + real))
        parts.append(np.asarray(v, order + real).ravel())
    got = [np.asarray(v, order + real).astype(float) for v in vals]
    t = float(np.array(head[3], order + real)) if not function else 0.0
    return gen.fortran_records(parts, order, records=records), got, t


@gen.cases(20)
@given(seed=st.integers(0, 2**32 - 1), d=st.sampled_from([2, 3]), function=st.booleans(), nvar=st.integers(1, 3),
       files=st.integers(1, 3), nblocks=st.integers(1, 3), ranks=st.integers(0, 3))
def test_solution_files_are_frames(seed, d, function, nvar, files, nblocks, ranks):
    """1 to 3 solution files, each its own form (binary or formatted, q or function, one kind
    for all): each a frame of the converted grid, in the order given, every value and time
    numpy's (or Python's reading of the text)."""
    rng = np.random.default_rng(seed)
    multi = nblocks > 1 or bool(rng.integers(0, 2))
    dims = [tuple(int(x) for x in rng.integers(1, 5, d)) + ((1,) if d == 2 else ()) for _ in range(nblocks)]
    if not function:
        nvar = d + 2
    grid = [(np.arange(int(np.prod(dm))) * 0.5 + b + c) for b, dm in enumerate(dims) for c in range(d)]
    parts = ([np.array([nblocks], "<i4")] if multi else []) + [np.array([dm[:d] for dm in dims], "<i4").ravel()]
    for b in range(nblocks):
        parts.append(np.concatenate(grid[b * d:(b + 1) * d]).astype("<f8"))
    with gen.scratch() as tmp:
        (tmp / "grid.x").write_bytes(gen.fortran_records(parts))
        sols = []
        for k in range(files):
            form = (str(rng.choice(["<", ">"])), str(rng.choice(["f4", "f8"])), bool(rng.integers(0, 2)), multi,
                    bool(rng.random() < 0.3))
            if not form[2] and not form[4]:  # C binary: a function file of one block is ambiguous with a grid
                form = (form[0], form[1], True, form[3], form[4])
            data, got, t = solution_bytes(rng, dims, d, function, nvar, form)
            (tmp / f"s{k}.q").write_bytes(data)
            sols.append((got, t))
        args = ["convert", tmp / "grid.x", tmp / "out.h5"] + [a for k in range(files) for a in ("--solution", tmp / f"s{k}.q")]
        r = conftest.mpirun(ranks, conftest.EXE, *args) if ranks else gen.ab(*args)
        conftest.assert_status(r, 0)
        with h5py.File(tmp / "out.h5") as f:
            off = f["blocks/offsets"][:]
            frames = sorted(f["frames"])
            assert len(frames) == files
            names = f.attrs["variables"]
            names = (names.decode() if isinstance(names, bytes) else str(names)).split("\n")
            want_names = (["Density", "MomentumX", "MomentumY"] + (["MomentumZ"] if d == 3 else []) + ["EnergyStagnationDensity"]
                          if not function else [f"function {v + 1}" for v in range(nvar)])
            assert [n for n in names if n] == want_names
            for k, fr in enumerate(frames):
                got, t = sols[k]
                assert f["frames"][fr].attrs["time"] == pytest.approx(t, rel=1e-6)
                order = want_names
                for v, name in enumerate(order):
                    for b in range(nblocks):
                        np.testing.assert_array_equal(f[f"frames/{fr}/{name}"][off[b]:off[b + 1]], got[b][v],
                                                      err_msg=f"file {k} block {b + 1} {name}")
