"""Partition routes under mpiexec on cases drawn at random, against the serial command's
bytes: a mesh of any size (2D or 3D, with frames), 1 to 12 parts, 1 to 5 ranks, every
layout, weights of up to 10 digits written anyhow (signs, blank runs, several a line, no
last newline: each rank's share of the file cuts them anywhere); and each rank's part read
straight from the global geometry and a partition file
(ab_part_open_global) against the part files the serial command wrote."""
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

import conftest
import gen
import slf

pytestmark = [pytest.mark.mpi, pytest.mark.generated]


def outputs(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def weights_text(rng, n):
    """n weights (1 to 10 digits) as a person or a program might write them."""
    w = np.where(rng.random(n) < 0.6, rng.integers(10**8, 10**9 + 1, n), rng.integers(1, 20, n))
    seps = [" ", "\n", " ", "\n", "   ", "\t", " \r\n", "\n\n", "  \n "]
    per = rng.choice(seps, n)
    text = "".join(("+" if rng.random() < 0.1 else "") + str(int(v)) + str(s) for v, s in zip(w, per))
    return text.rstrip() if rng.random() < 0.5 else text


@gen.cases(25)
@given(seed=st.integers(0, 2**32 - 1), elements=st.integers(30, 3000), planes=st.sampled_from([1, 1, 3]),
       frames=st.integers(0, 2), parts=st.integers(1, 12), ranks=st.integers(1, 5),
       layout=st.sampled_from(["telemac", "concat", "partition-file"]), weighted=st.booleans(), cli=st.booleans())
def test_partition_under_mpiexec_is_the_serial_bytes(seed, elements, planes, frames, parts, ranks, layout, weighted, cli):
    rng = np.random.default_rng(seed)
    with gen.scratch() as tmp:
        args = ["generate", "-n", elements, "-o", tmp / "m.slf", "--frames", frames]
        if planes > 1:
            args += ["--planes", planes]
        conftest.assert_status(gen.ab(*args), 0)
        mesh = slf.read(tmp / "m.slf")
        nelem2 = mesh.nelem // max(1, planes - 1) if planes > 1 else mesh.nelem
        parts = min(parts, nelem2)
        opts = ["-n", parts, "--method", "sfc", "--layout", layout]
        if cli and planes == 1:
            opts += ["--cli", tmp / "m.cli"]
        if weighted:
            (tmp / "w.txt").write_text(weights_text(rng, nelem2))
            opts += ["--weights", tmp / "w.txt"]
        serial = gen.ab("partition", tmp / "m.slf", *opts, "-o", tmp / "serial")
        conftest.assert_status(serial, 0)
        want = outputs(tmp / "serial")
        for r in sorted({ranks, int(rng.integers(2, 6))}):  # two rank counts: the shares cut the files elsewhere
            proc = conftest.mpirun(r, conftest.EXE, "partition", tmp / "m.slf", *opts, "-o", tmp / f"par{r}")
            conftest.assert_status(proc, 0)
            got = outputs(tmp / f"par{r}")
            assert sorted(got) == sorted(want)
            for name in want:
                assert got[name] == want[name], (r, name)


GLOBAL = """
import sys, numpy as np, anabranch
from mpi4py import MPI
sys.path.insert(0, sys.argv[4])
import slf
comm = MPI.COMM_WORLD
try:
    part = anabranch.read_part_global(sys.argv[1], sys.argv[2], comm)
except anabranch.Error as e:
    print(f"rank {comm.rank}: {e}", file=sys.stderr)
    sys.exit(1)
ref = slf.read(sys.argv[3] + f"{comm.size - 1:05d}-{comm.rank:05d}")
# the serial part file's nodes (KNOLG in IPOBO), coordinates and elements (as global node
# numbers, in element order), whatever the order of the nodes within the part
order = np.argsort(ref.ipobo)
assert np.array_equal(part.knolg, ref.ipobo[order]), (comm.rank, "KNOLG")
assert np.array_equal(np.asarray(part.x, ref.ftype), ref.x[order]) and np.array_equal(np.asarray(part.y, ref.ftype), ref.y[order]), \
    (comm.rank, "coordinates")
mine = [tuple(sorted(part.knolg[e - 1])) for e in part.ikle.reshape(ref.ikle.shape)]
theirs = [tuple(sorted(ref.ipobo[e - 1])) for e in ref.ikle]
assert sorted(mine) == sorted(theirs), (comm.rank, "elements")
"""


@gen.cases(15)
@given(seed=st.integers(0, 2**32 - 1), elements=st.integers(30, 2000), planes=st.sampled_from([1, 1, 2, 3]), ranks=st.integers(1, 5),
       kind=st.sampled_from(["sfc", "file"]))
def test_a_part_read_from_the_global_geometry_is_the_serial_part(seed, elements, planes, ranks, kind):
    """Each rank reads its part straight from the global geometry and a partition file (its
    share of the file's bytes, cut anywhere in a line; the rows and coordinates of its
    elements): the part the serial command writes, node for node."""
    rng = np.random.default_rng(seed)
    with gen.scratch() as tmp:
        args = ["generate", "-n", elements, "-o", tmp / "m.slf"] + (["--planes", planes] if planes > 1 else [])
        conftest.assert_status(gen.ab(*args), 0)
        mesh = slf.read(tmp / "m.slf")
        nelem2 = mesh.nelem // (planes - 1) if planes > 1 else mesh.nelem
        ranks = min(ranks, nelem2)
        (tmp / "e").mkdir()
        if kind == "sfc":
            conftest.assert_status(gen.ab("partition", tmp / "m.slf", "-n", ranks, "--method", "sfc", "--layout", "partition-file",
                                          "-o", tmp / "e"), 0)
            epart = next((tmp / "e").iterdir())
        else:  # any element -> part map (every part used), written with odd blanks
            p = rng.integers(0, ranks, nelem2)
            p[:ranks] = np.arange(ranks)
            rng.shuffle(p)
            epart = tmp / "e" / f"m.slf.epart.{ranks}"
            epart.write_text("".join(f"{v}\n" for v in p))
        conftest.assert_status(gen.ab("partition", tmp / "m.slf", "-n", ranks, "--partition", epart, "-o", tmp / "parts"), 0)
        (tmp / "g.py").write_text(GLOBAL)
        proc = conftest.mpirun(ranks, sys.executable, tmp / "g.py", tmp / "m.slf", epart, tmp / "parts" / "m.slf",
                               gen.__file__.rsplit("/", 1)[0])
        conftest.assert_status(proc, 0)
