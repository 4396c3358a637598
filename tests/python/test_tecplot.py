"""Tecplot .plt from the solvers' libraries and the commands under mpiexec: the C, Fortran and
Python mini solvers (mesh results) and the C and Fortran block solvers write the same bytes
at every rank count, whose values the independent reader finds where the SERAFIN or raw runs
put them; restarts read a .plt on another rank count; merge writes one from per-rank parts;
a header with room for fewer frames than written is moved along, not cut."""
import os
import sys

import numpy as np
import pytest

import conftest
from slf import read
from test_blocks import expected_state, grid, dims_of  # noqa: F401  (grid: the block fixture)
from test_gen_tecplot import read_with
from test_mini_solver import mesh, parted  # noqa: F401  (fixtures)

pytestmark = pytest.mark.mpi

SOLVER = os.environ.get("AB_MINI_SOLVER")
SOLVER_F = os.environ.get("AB_MINI_SOLVER_F")
SOLVER_PY = os.environ.get("AB_PY_MINI_SOLVER")
BLOCKS = os.environ.get("AB_BLOCKS_SOLVER")
BLOCKS_F = os.environ.get("AB_BLOCKS_SOLVER_F")


def mpirun(n, *args):
    proc = conftest.mpirun(n, *args)
    conftest.assert_status(proc, 0)
    return proc


def test_mesh_solvers_write_one_plt_at_every_rank_count(mesh, parted):
    """The C solver at 1, 2 and 3 ranks, the Fortran one at 2 and the Python one at 1, with
    the header's room for fewer, as many and more frames than written: the same bytes; every
    zone holds the SERAFIN run's values; a restart from frame 3 of the .plt on another rank
    count writes the uninterrupted SERAFIN run's bits."""
    mpirun(3, SOLVER, parted(3), mesh / "mesh.slf", mesh / "ref.slf", "aggregated", 5)
    files = {}
    for n, solver, options in ((1, SOLVER, "tecplot"), (2, SOLVER, "tecplot frames=5"), (3, SOLVER, "tecplot frames=9"),
                               (2, SOLVER_F, "tecplot frames=2"), (1, SOLVER_PY, "tecplot")):
        if not solver:
            continue
        out = mesh / f"{n}-{len(files)}" / "run.plt"  # one name: the title is the SERAFIN one, the bytes must match
        out.parent.mkdir()
        cmd = [sys.executable, solver] if solver == SOLVER_PY else [solver]
        mpirun(n, *cmd, parted(n), mesh / "mesh.slf", out, options, 5)
        files[(n, solver, options)] = out.read_bytes()
    ref = read(mesh / "ref.slf")
    # Room for 5 frames or fewer (the values moved along at close): one file; for 9, the
    # same with its header padded.
    exact = {data for key, data in files.items() if key[2] != "tecplot frames=9"}
    assert len(exact) == 1, "every rank count, language and room of 5 frames or fewer: one file"
    padded = files.get((3, SOLVER, "tecplot frames=9"))
    assert len(padded) > len(next(iter(exact))) and padded[-100000:] == next(iter(exact))[-100000:]
    meta, arrays = read_with("tecio-python", mesh / "1-0" / "run.plt", mesh)
    assert len(meta["zones"]) == 5 and meta["variables"][2:] == [v[:16].strip() for v in ref.vars]
    for f, (t, values) in enumerate(ref.frames):
        assert meta["zones"][f]["time"] == float(t)
        for v, want in enumerate(values):
            np.testing.assert_array_equal(arrays[f"z{f}_v{v + 2}"], want.astype(want.dtype.newbyteorder("=")), err_msg=f"frame {f}")
    np.testing.assert_array_equal(arrays["z0_c"], ref.ikle - 1)
    for then, strategy in ((2, "aggregated"), (3, "independent")):
        again = mesh / f"again{then}.slf"
        mpirun(then, SOLVER, parted(then), mesh / "mesh.slf", again, "aggregated", 5, mesh / "1-0" / "run.plt", 3, strategy)
        assert again.read_bytes() == (mesh / "ref.slf").read_bytes(), (then, strategy)


def test_block_solvers_write_one_plt_at_every_rank_count(grid):
    """The C block solver at 2 and 3 ranks and the Fortran one at 2 (300 blocks, split ones
    among them): the same bytes; tecio-python finds each block's state where the solver left
    it; a restart from the .plt on another rank count ends with the uninterrupted raw run."""
    if not BLOCKS:
        pytest.skip("blocks_solver not built")
    mpirun(3, BLOCKS, grid / "a3.json", grid / "ref.dat", 3, "")
    runs = [(2, BLOCKS, "c2"), (3, BLOCKS, "c3")] + ([(2, BLOCKS_F, "f2")] if BLOCKS_F else [])
    for n, solver, name in runs:
        (grid / name).mkdir()
        mpirun(n, solver, grid / f"a{n}.json", grid / name / "run.plt", 3, "frames=3")
    first = (grid / "c2" / "run.plt").read_bytes()
    for _, _, name in runs:
        assert (grid / name / "run.plt").read_bytes() == first, name
    meta, arrays = read_with("tecio-python", grid / "c2" / "run.plt", grid)
    dims = dims_of(grid)
    assert len(meta["zones"]) == 3 * len(dims)
    for b in (0, 1, 150, 299):
        z = 2 * len(dims) + b  # the last frame's zone of block b
        want = expected_state(b + 1, dims[b], 3)
        for v in range(want.shape[0]):
            np.testing.assert_array_equal(arrays[f"z{z}_v{v + 3}"], want[v].ravel(), err_msg=f"block {b + 1}")
    mpirun(2, BLOCKS, grid / "a2.json", grid / "again.dat", 3, "", grid / "c3" / "run.plt", 1)
    assert (grid / "again.dat").read_bytes() == (grid / "ref.dat").read_bytes()


def test_merge_writes_a_plt_of_the_parts(ab, tmp_path):
    """Per-rank parts merged into a .plt on 1, 2 and 3 ranks: the same bytes, the values of
    the SERAFIN merge (diff --values-only)."""
    conftest.assert_status(ab("generate", "-n", 3000, "--frames", 3, "-o", tmp_path / "m.slf"), 0)
    conftest.assert_status(ab("partition", tmp_path / "m.slf", "-n", 3, "-o", tmp_path), 0)
    conftest.assert_status(ab("merge", tmp_path / "m.slf", "--geo", tmp_path / "m.slf", "-o", tmp_path / "g.slf"), 0)
    got = set()
    for n in (1, 2, 3):
        (tmp_path / str(n)).mkdir()
        out = tmp_path / str(n) / "g.plt"
        mpirun(n, conftest.EXE, "merge", tmp_path / "m.slf", "--geo", tmp_path / "m.slf", "-o", out)
        got.add(out.read_bytes())
        conftest.assert_status(ab("diff", tmp_path / "g.slf", out, "--values-only"), 0)
    assert len(got) == 1
    r = ab("merge", tmp_path / "m.slf", "--geo", tmp_path / "m.slf", "-o", tmp_path / "x.plt", "--strategy", "collective")
    conftest.assert_status(r, 1, "x.plt", "Tecplot", "--strategy tecplot")
