"""The Python package (anabranch, over the C API): reading SERAFIN and HDF5 lazily, writing,
the commands with the command line's reports, exceptions under anabranch.Error, and the
Python mini solver giving the C solver's bits at 1, 2 and 3 ranks."""
import filecmp
import os
import sys

import numpy as np
import pytest

import slf
from conftest import fixture_files, raises_exactly, run

anabranch = pytest.importorskip("anabranch", reason="the Python package is not built (PYTHONPATH=<build>/python)")
FILES = fixture_files()
MPIEXEC = os.environ.get("AB_MPIEXEC", "mpiexec")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1")


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_read_matches_an_independent_reader_and_write_gives_the_same_bytes(path, tmp_path, ab):
    s = slf.read(path)
    ds = anabranch.read(path)
    assert (ds.nelem, ds.npoin, ds.ndp, ds.nplan) == (s.nelem, s.npoin, s.ndp, s.nplan)
    assert ds.dtype.itemsize == s.rs and len(ds.frames) == len(s.frames)
    np.testing.assert_array_equal(ds.mesh.ikle, s.ikle)
    np.testing.assert_array_equal(ds.mesh.ipobo, s.ipobo)
    np.testing.assert_array_equal(ds.mesh.x, s.x)
    for k, (t, vals) in enumerate(s.frames):
        frame = ds.frames[k]
        assert frame.time == t
        for v, name in enumerate(ds.names):
            np.testing.assert_array_equal(frame[name], vals[v])
    if s.frames:
        np.testing.assert_array_equal(ds.frames[-1][ds.names[0]], s.frames[-1][1][0])
        np.testing.assert_array_equal(ds.values(0, 0, first=3, count=5), s.frames[0][1][0][3:8])
    h = ds.header
    out = tmp_path / "w.slf"
    n = anabranch.write(out, ds.mesh, ds.variables, ((f.time, dict(f.items())) for f in ds.frames), title=h["title"],
                        precision=ds.precision, big_endian=h["byte_order"] == "big", date=h["date"], iparam=h["iparam"])
    assert n == len(s.frames)
    info = ab("info", "--json", path).json()[0]
    expected = path.read_bytes()
    if info["trailing_bytes"]:
        expected = expected[:-info["trailing_bytes"]]
    if h["title_suffix"] in ("SERAFIN ", "SERAFIND"):  # titles whose suffix the writer keeps as it is
        assert out.read_bytes() == expected


def test_hdf5_read_and_write(data, tmp_path):
    src = anabranch.read(data / "r3d_gouttedo.slf")
    out = tmp_path / "x.h5"
    anabranch.write(out, src.mesh, src.variables, ((f.time, dict(f.items())) for f in src.frames), title=src.title,
                    iparam=src.header["iparam"])
    h5 = anabranch.read(out)
    assert h5.format == "hdf5" and h5.header["provenance"]["program"] == "anabranch"
    np.testing.assert_array_equal(h5.times, src.times)
    np.testing.assert_array_equal(h5.mesh.ikle, src.mesh.ikle)
    for k in (0, 5, 10):
        for name in src.names:
            np.testing.assert_array_equal(h5.frames[k][name], src.frames[k][name])
    assert (tmp_path / "x.h5.xmf").exists()


def test_commands_return_the_command_lines_reports(ab, data, tmp_path):
    assert anabranch.info(data / "r2d_gouttedo.slf") == ab("info", "--json", data / "r2d_gouttedo.slf").json()[0]
    (tmp_path / "py").mkdir()
    (tmp_path / "cli").mkdir()
    rep = anabranch.partition(data / "geo_gouttedo.slf", 3, cli=data / "geo_gouttedo.cli", output=tmp_path / "py")
    ref = ab("partition", data / "geo_gouttedo.slf", "--cli", data / "geo_gouttedo.cli", "-n", 3, "-o", tmp_path / "cli",
             "--json").json()
    assert rep.keys() == ref.keys()
    for key in ("parts", "imbalance", "edge_cut", "files"):
        if key in ref:
            assert rep[key] == ref[key], key
    for f in os.listdir(tmp_path / "cli"):
        assert filecmp.cmp(tmp_path / "py" / f, tmp_path / "cli" / f, shallow=False), f
    # Split a result along those parts, merge it back: the original frames.
    anabranch.split(data / "r2d_gouttedo.slf", tmp_path / "py/geo_gouttedo.slf", output=tmp_path / "py", name="RES")
    rep = anabranch.merge(tmp_path / "py/RES", data / "geo_gouttedo.slf", output=tmp_path / "merged.slf")
    assert rep["parts"] == 3 and rep["frames"] == 21
    merged, original = anabranch.read(tmp_path / "merged.slf"), anabranch.read(data / "r2d_gouttedo.slf")
    np.testing.assert_array_equal(merged.times, original.times)
    for k in (0, 20):
        for name in original.names:
            np.testing.assert_array_equal(merged.frames[k][name], original.frames[k][name])
    rep = anabranch.convert(tmp_path / "merged.slf", tmp_path / "m.h5")
    assert rep["output_format"] == "hdf5" and rep["frames"] == 21


def test_errors_are_anabranch_errors(data, tmp_path):
    with raises_exactly(anabranch.IoError):
        anabranch.read(tmp_path / "missing.slf")
    (tmp_path / "cut.slf").write_bytes((data / "r2d_gouttedo.slf").read_bytes()[:5000])
    with raises_exactly(anabranch.FormatError, match="cut.slf: record"):
        anabranch.read(tmp_path / "cut.slf")
    # A refused value is named as the caller wrote it, not as the command line's option.
    with raises_exactly(anabranch.UsageError, match=r"number of parts must be in 1\.\.100000 \(the argument 'parts'\)$"):
        anabranch.partition(data / "geo_gouttedo.slf", 0, output=tmp_path)
    with raises_exactly(anabranch.UsageError, match=r"the argument 'elements'") as refused:
        anabranch.generate(tmp_path / "g.slf", elements=0)
    assert "-n" not in str(refused.value) and "--elements" not in str(refused.value)
    ds = anabranch.read(data / "r2d_gouttedo.slf")
    with raises_exactly(anabranch.UsageError):
        ds.values(99, 0)
    with raises_exactly(anabranch.UsageError, match="no values for"):
        anabranch.write(tmp_path / "w.slf", ds.mesh, ["A", "B"], [(0.0, {"A": np.zeros(ds.npoin)})])
    assert not any(p.name.startswith("w.slf") for p in tmp_path.iterdir())  # nothing half-written left
    name = "A_NAME_OF_17_CHRS"  # SERAFIN keeps 16 characters of a name: a longer one is refused, not cut
    with raises_exactly(anabranch.UsageError, match="at most 16 characters"):
        anabranch.write(tmp_path / "w.slf", ds.mesh, [name], [(0.0, {name: np.zeros(ds.npoin)})])
    assert issubclass(anabranch.FormatError, anabranch.Error) and issubclass(anabranch.IoError, OSError)


SOLVER_PY = os.environ.get("AB_PY_MINI_SOLVER")


def test_python_mini_solver_writes_the_c_solvers_bits(ab, tmp_path):
    c_solver = os.environ.get("AB_MINI_SOLVER")
    if not (SOLVER_PY and c_solver):
        pytest.skip("mini solvers not given (AB_PY_MINI_SOLVER, AB_MINI_SOLVER)")
    pytest.importorskip("mpi4py")
    assert ab("generate", "-n", 6000, "-o", tmp_path / "mesh.slf").returncode == 0
    reference = None
    for n in (1, 2, 3):
        parts = tmp_path / f"p{n}"
        parts.mkdir()
        assert ab("partition", tmp_path / "mesh.slf", "--cli", tmp_path / "mesh.cli", "-n", n, "-o", parts).returncode == 0
        for name, cmd in (("c", [c_solver]), ("py", [sys.executable, SOLVER_PY])):
            for strategy in ("aggregated", "collective", "hdf5"):
                ext = ".h5" if strategy == "hdf5" else ".slf"
                out = tmp_path / f"{name}{n}{strategy}{ext}"
                proc = run(["timeout", "120", MPIEXEC, "-n", str(n), *cmd, parts / "mesh.slf", tmp_path / "mesh.slf",
                            out, strategy, "3"], capture_output=True, text=True, env=ENV)
                assert proc.returncode == 0, proc.stdout + proc.stderr
                if strategy == "hdf5":
                    assert ab("convert", out, out.with_suffix(".slf")).returncode == 0
                    out = out.with_suffix(".slf")
                data = out.read_bytes()
                reference = reference or data
                assert data == reference, (name, n, strategy)


def test_lookups_fail_as_python_users_expect(data):
    ds = anabranch.read(data / "r2d_gouttedo.slf")
    with raises_exactly(KeyError, match="NOPE.*the file has"):
        ds.frames[0]["NOPE"]
    n = len(ds.frames)
    with raises_exactly(IndexError, match=f"frame -100 out of range: the file has {n} frames"):
        ds.frames[-100]
    ds.close()
    with raises_exactly(anabranch.UsageError, match="closed"):
        ds.values(0, 0)
