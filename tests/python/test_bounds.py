"""Every option's bounds from both sides: the limit itself, just inside and just outside,
each with its documented exit status (docs/commands/index.md: 0 success, 1 a value the
command refuses, 2 the command line itself; diff: 2 for any trouble) and, refused, one line
that names the option and the bound."""
import math

import numpy as np
import pytest

import conftest

DATA_R = "r2d_gouttedo.slf"  # 21 frames
DATA_G = "geo_gouttedo.slf"  # 8,978 elements
TINY = 5e-324  # the smallest double above 0
BELOW_1 = math.nextafter(1.0, 0.0)

CASES = [
    # generate: the mesh's size, planes, frames, variables (CLI11's ranges)
    (["generate", "-n", "1"], 1, "--elements: Value 1 not in range 2 to 2000000000"),
    (["generate", "-n", "2"], 0, None),
    (["generate", "-n", "3"], 0, None),
    (["generate", "-n", "2000000001"], 1, "not in range 2 to 2000000000"),
    (["generate", "-n", "2", "--planes", "0"], 1, "--planes: Value 0 not in range 1 to 1000"),
    (["generate", "-n", "2", "--planes", "1"], 0, None),
    (["generate", "-n", "2", "--planes", "1000"], 0, None),
    (["generate", "-n", "2", "--planes", "1001"], 1, "--planes: Value 1001 not in range 1 to 1000"),
    (["generate", "-n", "2", "--frames", "-1"], 1, "--frames: Value -1 not in range 0 to 1000000"),
    (["generate", "-n", "2", "--frames", "0"], 0, None),
    (["generate", "-n", "2", "--frames", "1000001"], 1, "--frames: Value 1000001 not in range 0 to 1000000"),
    (["generate", "-n", "2", "--vars", "1000"], 0, None),
    (["generate", "-n", "2", "--vars", "1001"], 1, "--vars: Value 1001 not in range 0 to 1000"),
    # partition: 1..100000 parts, and no more parts than elements
    (["partition", "@G", "-n", "0", "-o", "@out"], 1, "the number of parts must be in 1..100000 (-n)"),
    (["partition", "@G", "-n", "1", "-o", "@out"], 0, None),
    (["partition", "@G", "-n", "8978", "-o", "@out"], 0, None),
    (["partition", "@G", "-n", "8979", "-o", "@out"], 1, "cannot make 8979 parts of 8978 elements"),
    (["partition", "@G", "-n", "100000", "-o", "@out"], 1, "cannot make 100000 parts of 8978 elements"),
    (["partition", "@G", "-n", "100001", "-o", "@out"], 1, "the number of parts must be in 1..100000 (-n)"),
    # convert --frame: 0..N-1, or -N..-1 from the end
    (["convert", "@R", "@out.vtu", "--frame", "0"], 0, None),
    (["convert", "@R", "@out.vtu", "--frame", "20"], 0, None),
    (["convert", "@R", "@out.vtu", "--frame", "21"], 1, "--frame 21:"),
    (["convert", "@R", "@out.vtu", "--frame", "-21"], 0, None),
    (["convert", "@R", "@out.vtu", "--frame", "-22"], 1, "--frame -22:"),
    # --compress: abs and rel above 0 and finite, rel below 1
    (["convert", "@R", "@out.h5", "--compress", "rel=1"], 1, "a relative bound must be below 1"),
    (["convert", "@R", "@out.h5", "--compress", f"rel={BELOW_1!r}"], 0, None),
    (["convert", "@R", "@out.h5", "--compress", "rel=0"], 1, "the bound must be a finite number above 0"),
    (["convert", "@R", "@out.h5", "--compress", f"rel={TINY!r}"], 0, None),
    (["convert", "@R", "@out.h5", "--compress", "abs=0"], 1, "the bound must be a finite number above 0"),
    (["convert", "@R", "@out.h5", "--compress", f"abs={TINY!r}"], 0, None),
    (["convert", "@R", "@out.h5", "--compress", "abs=-1e-300"], 1, "the bound must be a finite number above 0"),
    (["convert", "@R", "@out.h5", "--compress", "abs=1e308"], 0, None),
    (["convert", "@R", "@out.h5", "--compress", "abs=inf"], 1, "the bound must be a finite number above 0"),
    (["convert", "@R", "@out.h5", "--compress", "abs=nan"], 1, "the bound must be a finite number above 0"),
    (["convert", "@R", "@out.h5", "--compress", "abs=1e-3x"], 1, "the bound must be a finite number above 0"),
    (["convert", "@R", "@out.h5", "--compress", "rel=1e-4:lz4"], 1, "the codec after ':' is deflate or zstd"),
    # balance: at least 1 process, a tolerance of at least 1, a weight of at least 0
    (["balance", "@blocks", "-n", "0"], 1, "the number of processes must be at least 1 (-n)"),
    (["balance", "@blocks", "-n", "1"], 0, None),
    (["balance", "@blocks", "-n", "2", "--tolerance", "1"], 0, None),
    (["balance", "@blocks", "-n", "2", "--tolerance", repr(BELOW_1)], 1, "--tolerance is a max/mean ratio: at least 1"),
    (["balance", "@blocks", "-n", "2", "--comm-weight", "0"], 0, None),
    (["balance", "@blocks", "-n", "2", "--comm-weight", "-1e-300"], 1, "--comm-weight is a weight: at least 0"),
    # diff --frames: 0..N-1, -N..-1, ranges that hold a frame (diff: 2 for any trouble)
    (["diff", "@R", "@R", "--frames", "20"], 0, None),
    (["diff", "@R", "@R", "--frames", "21"], 2, "--frames 21: frame 21 of 21"),
    (["diff", "@R", "@R", "--frames", "-21"], 0, None),
    (["diff", "@R", "@R", "--frames", "-22"], 2, "--frames -22"),
    (["diff", "@R", "@R", "--frames", "5:5"], 0, None),
    (["diff", "@R", "@R", "--frames", "5:4"], 2, "holds no frame"),
]


def expand(args, data, tmp_path):
    (tmp_path / "blocks.txt").write_text("1 4 4 4\n2 3 3 3\n")
    sub = {"@G": str(data / DATA_G), "@R": str(data / DATA_R), "@blocks": str(tmp_path / "blocks.txt")}
    out = []
    for a in args:
        if a in sub:
            out.append(sub[a])
        elif a.startswith("@out"):
            out.append(str(tmp_path / ("out" + a[4:])))
        else:
            out.append(a)
    if args[0] == "generate":
        out += ["-o", str(tmp_path / "g.slf")]
    return out


@pytest.mark.parametrize("args, status, says", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_an_options_bound_from_both_sides(ab, data, tmp_path, args, status, says):
    r = ab(*expand(args, data, tmp_path))
    conftest.assert_status(r, status)
    if status:
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and says in lines[0], r.stderr
        assert not [p for p in tmp_path.iterdir() if p.name.startswith("out")], sorted(p.name for p in tmp_path.iterdir())


@pytest.mark.parametrize("ranges, ok", [(((0, 4), (0, 3), (0, 2)), True), (((1, 4), None, None), True), (((3, 4), None, None), True),
                                        (((0, 5), None, None), False), (((-1, 4), None, None), False), (((2, 2), None, None), False),
                                        ((None, (0, 4), None), False), ((None, None, (0, 3)), False)])
def test_a_pieces_range_from_both_sides(tmp_path, ranges, ok):
    """A piece of a 4 x 3 x 2 block: each range within 0..n, not empty; else refused in one
    line naming the piece, the block, the range and the direction."""
    anabranch = pytest.importorskip("anabranch")
    layout = anabranch.BlockLayout()
    layout.add_block(1, 4, 3, 2)
    if not ok:
        with pytest.raises(anabranch.UsageError, match=r"piece 1 of block 1: range \[-?\d+, \d+\) in direction [ijk] is empty or outside"):
            layout.add_piece(1, i=ranges[0], j=ranges[1], k=ranges[2])
        return
    layout.add_piece(1, i=ranges[0], j=ranges[1], k=ranges[2])
    i = ranges[0] or (0, 4)
    for rest in ((0, i[0]), (i[1], 4)):  # the block's other points, a piece each (every value written once)
        if rest[0] < rest[1]:
            layout.add_piece(1, i=rest)
    with anabranch.BlockWriter(None, tmp_path / "p.h5", layout, ["a"]) as w:
        q = layout.arrays(1)
        q[0][0][...] = 7.0
        w.write_frame(0.0, q)
    h5py = pytest.importorskip("h5py")
    with h5py.File(tmp_path / "p.h5") as f:
        a = f["frames/000000/a"][:].reshape(2, 3, 4)
        np.testing.assert_array_equal(a[:, :, i[0]:i[1]], 7.0)
