"""Every command that writes files, drawn at random with a file-size limit drawn at random
(a full disk's stand-in, deterministic: the write that crosses it fails), alone or under
mpiexec: whatever the outcome, no temporary file is left (`NAME.tmp.PID`), the inputs are
unchanged, and the outputs are either all there and whole (exit 0, `info --check` clean) or
none of them (exit 1, one error line naming the file, the same on every rank)."""
import hashlib
import os

import numpy as np
import pytest
from hypothesis import given, strategies as st

import conftest
import gen

pytestmark = [pytest.mark.faults, pytest.mark.generated]


def digest(folder):
    return {p.relative_to(folder): hashlib.sha1(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


COMMANDS = {
    # name: (arguments, the outputs it makes, may run under mpiexec)
    "convert-h5": (["convert", "IN/m.slf", "OUT/r.h5"], ["r.h5", "r.h5.xmf"], True),
    "convert-h5-compressed": (["convert", "IN/m.slf", "OUT/r.h5", "--compress", "rel=1e-4"], ["r.h5", "r.h5.xmf"], True),
    "convert-slf": (["convert", "IN/m.h5", "OUT/r.slf"], ["r.slf"], True),
    "convert-vtu": (["convert", "IN/m.slf", "OUT/r.vtu"], ["r.vtu"], False),
    "partition": (["partition", "IN/m.slf", "--cli", "IN/m.cli", "-n", "3", "--method", "sfc", "-o", "OUT"], None, True),
    "partition-concat": (["partition", "IN/m.slf", "-n", "4", "--method", "sfc", "--layout", "concat", "-o", "OUT"], None, False),
    "merge": (["merge", "IN/parts/m.slf", "--geo", "IN/m.slf", "-o", "OUT/g.slf"], ["g.slf"], True),
    "merge-h5": (["merge", "IN/parts/m.slf", "--geo", "IN/m.slf", "-o", "OUT/g.h5"], ["g.h5", "g.h5.xmf"], False),
    "refine": (["refine", "IN/m.slf", "-o", "OUT/f.slf"], ["f.slf", "f.cli"], False),
    "generate": (["generate", "-n", "3000", "--frames", "2", "-o", "OUT/g.slf"], ["g.slf", "g.cli"], False),
    "blocks-raw": (["convert", "IN/b.h5", "OUT/b.dat"], ["b.dat", "b.dat.json"], False),
    "blocks-plot3d": (["convert", "IN/b.h5", "OUT/b.xyz"], ["b.xyz"], False),
    "blocks-vtm": (["convert", "IN/b.h5", "OUT/b.vtm"], None, False),
    "blocks-cgns": (["convert", "IN/b.h5", "OUT/b.cgns"], ["b.cgns"], True),
    "blocks-cgns-compressed": (["convert", "IN/b.h5", "OUT/b.cgns", "--compress", "rel=1e-4:zstd"], ["b.cgns"], True),
    "blocks-h5": (["convert", "IN/b.h5", "OUT/c.h5"], ["c.h5", "c.h5.xmf"], True),
    "blocks-h5-compressed": (["convert", "IN/b.h5", "OUT/c.h5", "--compress", "lossless"], ["c.h5", "c.h5.xmf"], True),
    "convert-cgns": (["convert", "IN/m.slf", "OUT/r.cgns"], ["r.cgns"], True),
    "convert-cgns-compressed": (["convert", "IN/m.slf", "OUT/r.cgns", "--compress", "rel=1e-4"], ["r.cgns"], True),
    "convert-compressed-cgns-slf": (["convert", "IN/mc.cgns", "OUT/r.slf"], ["r.slf"], True),
    "convert-plt": (["convert", "IN/m.slf", "OUT/r.plt"], ["r.plt"], True),
    "convert-plt-slf": (["convert", "IN/m.plt", "OUT/r.slf"], ["r.slf"], True),
    "merge-plt": (["merge", "IN/parts/m.slf", "--geo", "IN/m.slf", "-o", "OUT/g.plt"], ["g.plt"], True),
    "blocks-plt": (["convert", "IN/b.h5", "OUT/b.plt"], ["b.plt"], True),
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("inputs")
    for args in (["generate", "-n", 4000, "--frames", 3, "-o", d / "m.slf"], ["convert", d / "m.slf", d / "m.h5"],
                 ["convert", d / "m.slf", d / "mc.cgns", "--compress", "lossless"], ["convert", d / "m.slf", d / "m.plt"],
                 ["partition", d / "m.slf", "-n", 3, "--method", "sfc", "-o", d / "parts"]):
        conftest.assert_status(gen.ab(*args), 0)
    anabranch = pytest.importorskip("anabranch")
    layout = anabranch.BlockLayout()
    for b, dims in enumerate([(9, 7, 5), (6, 5, 4)]):
        layout.add_block(b + 1, *dims)
        layout.add_piece(b + 1)
    rng = np.random.default_rng(3)
    with anabranch.BlockWriter(None, d / "b.h5", layout, ["rho", "p"]) as w:
        w.write_grid([[rng.random(int(np.prod(s))) for _ in range(3)] for s in [(9, 7, 5), (6, 5, 4)]])
        for t in range(3):
            w.write_frame(t, [[rng.random(int(np.prod(s))) for _ in range(2)] for s in [(9, 7, 5), (6, 5, 4)]])
    return d


@gen.cases(44)
@given(command=st.sampled_from(sorted(COMMANDS)), fraction=st.one_of(st.just(0.0), st.floats(0.0, 1.2)), ranks=st.integers(0, 3))
def test_outputs_are_whole_or_absent(inputs, command, fraction, ranks):
    args, outs, parallel = COMMANDS[command]
    if not parallel:
        ranks = 0
    before = digest(inputs)
    with gen.scratch() as tmp:
        out = tmp / "out"
        out.mkdir()
        argv = [str(a).replace("IN", str(inputs)).replace("OUT", str(out)) for a in args]
        # the size a successful run writes, for a limit drawn below it
        free = conftest.run([conftest.EXE, *argv], capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, ANABRANCH_PROGRESS="0"))
        conftest.assert_status(free, 0)
        complete = digest(out)
        biggest = max(p.stat().st_size for p in out.rglob("*") if p.is_file())
        for p in sorted(out.rglob("*"), reverse=True):
            p.unlink() if p.is_file() else p.rmdir()
        limit = int(biggest * fraction) if fraction else 0
        # the limit set in each process (prlimit), not on the launcher; Open MPI's shared memory
        # in System V segments, which are no files (its file-backed ones fail under the limit)
        prefix = ["prlimit", f"--fsize={limit}"] if limit else []
        env = dict(conftest.MPI_ENV, OMPI_MCA_shmem="sysv")
        if ranks:
            cmd = ["timeout", "120", conftest.MPIEXEC, "-n", str(ranks), *prefix, conftest.EXE, *argv]
        else:
            cmd = [*prefix, conftest.EXE, *argv]
        r = conftest.run(cmd, capture_output=True, text=True, timeout=300, env=env)
        left = sorted(p.name for p in tmp.rglob("*") if ".tmp." in p.name)
        assert not left, (command, limit, left, r.stderr[-2000:])
        assert digest(inputs) == before, "an input changed"
        if r.returncode == 0:
            got = digest(out)
            assert set(got) == set(complete), (command, limit)
            for name in got:  # the same bytes, where no provenance (a time, the ranks) is written
                if name.suffix in (".slf", ".cli", ".dat", ".xyz") or name.name.startswith("m.slf"):
                    assert got[name] == complete[name], (command, limit, name)
            for name in outs or []:
                if name.endswith((".slf", ".h5", ".cgns", ".plt")):
                    conftest.assert_status(gen.ab("info", "--check", out / name), 0)
        else:
            conftest.assert_status(r, 1)
            lines = conftest.error_lines(r.stderr)
            assert lines and len(set(lines)) == 1, r.stderr[-3000:]
            assert not [p for p in out.rglob("*") if p.is_file()], (command, limit, sorted(out.rglob("*")))
