"""`anabranch merge` and `split`: partition -> merge and split -> merge give back the
original bytes, in 2D and 3D, at several P, serially and under mpiexec; parts that disagree
or are missing give one clear error."""
import os
import re
import shutil

import numpy as np
import pytest

from conftest import EXE, MPI_ENV as ENV, MPIEXEC, assert_status, run
from slf import Slf, as_gretel_writes, read, shift_values


def meshes(data, tmp_path, ab):
    out = [(data / "r2d_gouttedo.slf", data / "geo_gouttedo.cli"), (data / "r3d_gouttedo.slf", None)]
    ab("generate", "-n", 3000, "--frames", 4, "--precision", "double", "--endian", "little", "-o", tmp_path / "ch.slf")
    out.append((tmp_path / "ch.slf", tmp_path / "ch.cli"))
    return out


@pytest.mark.parametrize("nparts", [1, 2, 5])
def test_partition_then_merge_gives_back_the_bytes(ab, data, tmp_path, nparts):
    for mesh, cli in meshes(data, tmp_path, ab):
        parts = tmp_path / f"parts-{mesh.stem}-{nparts}"
        parts.mkdir()
        args = ["partition", mesh, "-n", nparts, "-o", parts] + (["--cli", cli] if cli else [])
        assert ab(*args).returncode == 0
        out = tmp_path / f"merged-{mesh.stem}.slf"
        r = ab("merge", parts / mesh.name, "--geo", mesh, "-o", out, "--json")
        assert r.returncode == 0, r.stderr
        assert r.json()["parts"] == nparts
        assert out.read_bytes() == as_gretel_writes(mesh.read_bytes()), mesh.name


def test_merge_concat_and_split_to_another_count(ab, data, tmp_path):
    mesh, cli = data / "r2d_gouttedo.slf", data / "geo_gouttedo.cli"
    for layout, n in (("concat", 4), ("telemac", 3)):
        d = tmp_path / layout
        d.mkdir()
        assert ab("partition", mesh, "--cli", cli, "-n", n, "-o", d, "--layout", layout).returncode == 0
    # A run on 4 processes (concat) restarts on 3: split the merged result along the other partition.
    assert ab("merge", tmp_path / "concat" / "r2d_gouttedo.slf", "--geo", mesh, "-o", tmp_path / "m.slf").returncode == 0
    r = ab("split", tmp_path / "m.slf", "--plan", tmp_path / "telemac" / "r2d_gouttedo.slf", "-o", tmp_path / "telemac",
           "--name", "RESTART", "--json")
    assert r.returncode == 0, r.stderr
    assert r.json()["files"] == 3
    for p in range(3):
        a = (tmp_path / "telemac" / f"RESTART00002-0000{p}").read_bytes()
        assert a == (tmp_path / "telemac" / f"r2d_gouttedo.slf00002-0000{p}").read_bytes()
    assert ab("merge", tmp_path / "telemac" / "RESTART", "--geo", mesh, "-o", tmp_path / "back.slf").returncode == 0
    assert (tmp_path / "back.slf").read_bytes() == as_gretel_writes(mesh.read_bytes())
    r = ab("split", tmp_path / "m.slf", "--plan", tmp_path / "concat" / "r2d_gouttedo.slf-CONCAT", "-o", tmp_path / "concat",
           "--name", "R", "--layout", "concat")
    assert r.returncode == 0, r.stderr
    assert ab("merge", tmp_path / "concat" / "R", "--geo", mesh, "-o", tmp_path / "back2.slf").returncode == 0
    assert (tmp_path / "back2.slf").read_bytes() == as_gretel_writes(mesh.read_bytes())


@pytest.mark.parametrize("precision", ["single", "double"])
def test_merge_parts_of_either_byte_order(ab, tmp_path, precision):
    """A part written big-endian among little-endian ones: the output keeps part 0's order."""
    for order in ("little", "big"):
        (tmp_path / order).mkdir()
        ab("generate", "-n", 2000, "--frames", 3, "--precision", precision, "--endian", order, "-o", tmp_path / order / "ch.slf")
        assert ab("partition", tmp_path / order / "ch.slf", "-n", 3, "-o", tmp_path / order).returncode == 0
    shutil.copy(tmp_path / "big" / "ch.slf00002-00001", tmp_path / "little" / "ch.slf00002-00001")
    out = tmp_path / "out.slf"
    r = ab("merge", tmp_path / "little" / "ch.slf", "--geo", tmp_path / "little" / "ch.slf", "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == as_gretel_writes((tmp_path / "little" / "ch.slf").read_bytes())


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [2, 3])
def test_parallel_merge(ab, data, tmp_path, ranks):
    mesh = data / "r2d_gouttedo.slf"
    assert ab("partition", mesh, "-n", 5, "-o", tmp_path).returncode == 0
    proc = run(["timeout", "120", MPIEXEC, "-n", str(ranks), EXE, "merge", str(tmp_path / mesh.name), "--geo", str(mesh),
                "-o", str(tmp_path / "out.slf")], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out.slf").read_bytes() == as_gretel_writes(mesh.read_bytes())
    assert not [p for p in tmp_path.iterdir() if ".tmp." in p.name]


@pytest.mark.mpi
def test_interface_nodes_take_the_last_parts_value_at_any_rank_count(ab, data, tmp_path):
    """gretel's rule: parts are read in order and the last one holding a node gives its value.
    Parts that disagree on interface nodes (each part's values shifted by its own amount) merge
    to that, and to the same bytes whether 1, 2 or 3 ranks share the parts."""
    mesh = data / "r2d_gouttedo.slf"
    nparts = 5
    assert ab("partition", mesh, "-n", nparts, "-o", tmp_path).returncode == 0
    g = read(mesh)
    want = [[v.astype(np.float64).copy() for v in vals] for _, vals in g.frames]
    for k in range(nparts):
        path = tmp_path / f"{mesh.name}{nparts - 1:05d}-{k:05d}"
        part = read(path)
        shift_values(path, 1000.0 * (k + 1))
        for f in range(len(part.frames)):
            for v in range(len(part.vars)):
                # later parts overwrite: the last holder wins
                want[f][v][part.ipobo - 1] = part.frames[f][1][v] + np.array(1000.0 * (k + 1), dtype=part.ftype)
    outs = []
    for ranks in (1, 2, 3):
        out = tmp_path / f"out{ranks}.slf"
        proc = run(["timeout", "120", MPIEXEC, "-n", str(ranks), EXE, "merge", str(tmp_path / mesh.name), "--geo",
                    str(mesh), "-o", str(out)], capture_output=True, text=True, env=ENV)
        assert proc.returncode == 0, proc.stderr
        outs.append(out.read_bytes())
    got = Slf(outs[0])
    for f, (_, vals) in enumerate(got.frames):
        for v, values in enumerate(vals):
            assert np.array_equal(values, want[f][v].astype(got.ftype)), (f, v)
    assert outs[1] == outs[0] and outs[2] == outs[0]


def test_merge_errors_name_the_part(ab, data, tmp_path):
    mesh = data / "r2d_gouttedo.slf"
    assert ab("partition", mesh, "-n", 3, "-o", tmp_path).returncode == 0
    base = tmp_path / mesh.name
    part1 = tmp_path / (mesh.name + "00002-00001")
    good = part1.read_bytes()
    # Truncated part: one line naming it; --allow-partial merges the whole frames.
    part1.write_bytes(good[:-500])
    r = ab("merge", base, "--geo", mesh, "-o", tmp_path / "o.slf")
    assert_status(r, 1, "00002-00001")
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "o.slf").exists()
    r = ab("merge", base, "--geo", mesh, "-o", tmp_path / "o.slf", "--allow-partial", "--json")
    assert r.returncode == 0 and r.json()["frames"] == 20 and "20 frames" in r.stderr
    # A damaged record marker in the middle of a part: the file, the record and its byte offset.
    f = Slf(good)
    frame_bytes = 8 + f.rs + len(f.vars) * (8 + f.npoin * f.rs)
    record = f.header_bytes + frame_bytes + 8 + f.rs  # variable 1 of frame 2
    damaged = bytearray(good)
    damaged[record + 4 + f.npoin * f.rs:record + 8 + f.npoin * f.rs] = b"\0\0\0\7"
    part1.write_bytes(damaged)
    r = ab("merge", base, "--geo", mesh, "-o", tmp_path / "o1.slf")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "00002-00001" in r.stderr and "variable 1 of frame 2" in r.stderr and f"byte {record}" in r.stderr, r.stderr
    assert not (tmp_path / "o1.slf").exists()
    # Missing part.
    part1.write_bytes(good)
    part1.unlink()
    r = ab("merge", base, "--geo", mesh, "-o", tmp_path / "o2.slf")
    assert_status(r, 1, "missing", "00002-00001")  # merge.md: a missing part is 1
    assert not (tmp_path / "o2.slf").exists()
    # Parts of another mesh.
    shutil.copy(tmp_path / (mesh.name + "00002-00000"), part1)
    r = ab("merge", base, "--geo", data / "geo_malpasset-small.slf", "-o", tmp_path / "o3.slf")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "geo_malpasset-small.slf" in r.stderr and "not parts of this geometry" in r.stderr, r.stderr
    assert not (tmp_path / "o3.slf").exists()
    # A part whose frame 3 is at another time: named with the frame, alone and by 2 ranks.
    timed = bytearray(good)
    timed[f.header_bytes + 2 * frame_bytes + 4 + f.rs - 1] ^= 0x10  # a bit of the time of frame 3
    part1.write_bytes(timed)
    r = ab("merge", base, "--geo", mesh, "-o", tmp_path / "o4.slf")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "00002-00001" in r.stderr and "frame 3 is at t = " in r.stderr and "part 0's" in r.stderr, r.stderr
    assert not (tmp_path / "o4.slf").exists()
    proc = run(["timeout", "120", MPIEXEC, "-n", "2", EXE, "merge", str(base), "--geo", str(mesh), "-o",
                str(tmp_path / "o5.slf")], capture_output=True, text=True, env=ENV)
    assert_status(proc, 1, "00002-00001", "frame 3 is at t = ")
    assert not (tmp_path / "o5.slf").exists()


def test_parallel_writer_rewrites_every_fixture(ab, data, tmp_path):
    """Every TELEMAC fixture, partitioned, then written back by 3 ranks through the shared-file
    writer (parallel merge): the same bytes, read by xarray-selafin."""
    from conftest import fixture_files
    xr = None
    try:
        import xarray as xr  # noqa: F811
        import xarray_selafin  # noqa: F401
    except ImportError:
        pass
    for mesh in fixture_files():
        d = tmp_path / mesh.stem
        d.mkdir()
        assert ab("partition", mesh, "-n", 4, "-o", d).returncode == 0
        out = d / "out.slf"
        proc = run(["timeout", "120", MPIEXEC, "-n", "3", EXE, "merge", str(d / mesh.name), "--geo", str(mesh), "-o",
                    str(out)], capture_output=True, text=True, env=ENV)
        assert proc.returncode == 0, proc.stderr
        want = as_gretel_writes(mesh.read_bytes())
        got = out.read_bytes()
        assert got == want[:len(got)] and len(want) - len(got) <= 1, mesh.name  # a stray trailing byte is dropped
        if xr is not None:
            ds = xr.open_dataset(out, engine="selafin")
            assert ds.sizes["time"] == ab("info", "--json", mesh).json()[0]["frames"]


def test_merge_alone_of_large_frames_takes_the_last_parts_value(ab, tmp_path):
    """Frames of more than a MiB are assembled by two threads, each scattering the nodes its
    parts win: parts that disagree on interface nodes, one of them in the other byte order,
    still merge to the last holder's value everywhere."""
    src = tmp_path / "m.slf"
    assert ab("generate", "-n", 160000, "--frames", 2, "--vars", 5, "--endian", "little", "-o", src).returncode == 0
    g = read(src)
    assert g.npoin * len(g.vars) * 4 > 1 << 20
    (tmp_path / "p").mkdir()
    nparts = 5
    assert ab("partition", src, "-n", nparts, "-o", tmp_path / "p").returncode == 0
    (tmp_path / "big").mkdir()  # the same mesh and values big-endian, cut the same way
    assert ab("generate", "-n", 160000, "--frames", 2, "--vars", 5, "--endian", "big", "-o", tmp_path / "big" / "m.slf").returncode == 0
    assert ab("partition", tmp_path / "big" / "m.slf", "-n", nparts, "-o", tmp_path / "big").returncode == 0
    want = [[v.astype(np.float64).copy() for v in vals] for _, vals in g.frames]
    for k in range(nparts):
        path = tmp_path / "p" / f"m.slf{nparts - 1:05d}-{k:05d}"
        if k == 3:  # this one big-endian
            shutil.copy(tmp_path / "big" / path.name, path)
        part = read(path)
        shift_values(path, 1000.0 * (k + 1))
        for f in range(len(part.frames)):
            for v in range(len(part.vars)):
                want[f][v][part.ipobo - 1] = part.frames[f][1][v] + np.array(1000.0 * (k + 1), dtype=part.ftype)
    # the two threads as the machine runs them, then one after the other in each order (the
    # interleavings a machine's timing may or may not give): the same file each time
    for order in (None, "forward", "reverse"):
        env = dict(os.environ, ANABRANCH_PROGRESS="0", **({"ANABRANCH_TEST_MERGE_TEAMS": order} if order else {}))
        r = run([EXE, "merge", str(tmp_path / "p" / "m.slf"), "--geo", str(src), "-o", str(tmp_path / "out.slf")],
                capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        got = Slf((tmp_path / "out.slf").read_bytes())
        for f, (_, vals) in enumerate(got.frames):
            for v, values in enumerate(vals):
                assert np.array_equal(values, want[f][v].astype(got.ftype)), (order, f, v)


def test_serial_merge_of_parts_larger_than_a_read_piece(ab, tmp_path):
    """Parts of ~150,000 nodes: more than one piece (131,072 values) read per part and record."""
    assert ab("generate", "-n", 600000, "--frames", 2, "-o", tmp_path / "m.slf").returncode == 0
    (tmp_path / "p").mkdir()
    assert ab("partition", tmp_path / "m.slf", "-n", 2, "-o", tmp_path / "p").returncode == 0
    assert min(Slf((tmp_path / "p" / f"m.slf00001-0000{k}").read_bytes()).npoin for k in range(2)) > 131072
    r = ab("merge", tmp_path / "p" / "m.slf", "--geo", tmp_path / "m.slf", "-o", tmp_path / "back.slf")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "back.slf").read_bytes() == as_gretel_writes((tmp_path / "m.slf").read_bytes())


def test_merge_refuses_the_file_per_process_strategy(ab, tmp_path):
    assert ab("generate", "-n", 2000, "--frames", 1, "-o", tmp_path / "m.slf").returncode == 0
    assert ab("partition", tmp_path / "m.slf", "-n", 2, "-o", tmp_path / "p").returncode == 0
    r = ab("merge", tmp_path / "p" / "m.slf", "--geo", tmp_path / "m.slf", "--strategy", "file-per-process", "-o", tmp_path / "out.slf")
    assert_status(r, 1, "--strategy file-per-process does not apply")  # a value the command refuses
    assert not (tmp_path / "out.slf").exists()


def test_split_names_its_outputs_after_the_input_file_not_its_path(ab, tmp_path):
    (tmp_path / "in").mkdir()
    assert ab("generate", "-n", 2000, "--frames", 2, "-o", tmp_path / "in" / "r.slf").returncode == 0
    assert ab("partition", tmp_path / "in" / "r.slf", "-n", 2, "-o", tmp_path / "geo").returncode == 0
    r = ab("split", tmp_path / "in" / "r.slf", "--plan", tmp_path / "geo" / "r.slf", "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["r.slf00001-00000", "r.slf00001-00001"]


@pytest.mark.parametrize("tool", ["merge", "convert"])
def test_output_written_behind(ab, tmp_path, tool):
    """A large output is sent to the disk as it is written: the kernel is asked to start the
    writeback of every 4 MiB written (sync_file_range), in order, the tail at the end, so the
    whole file is on its way to disk when the tool ends (seen with strace)."""
    strace = shutil.which("strace")
    if not strace:
        pytest.skip("strace is not installed")
    src = tmp_path / "m.slf"
    assert ab("generate", "-n", 100000, "--frames", 12, "-o", src).returncode == 0
    out, log = tmp_path / "out.slf", tmp_path / "strace.txt"
    cmd = {"merge": ["merge", tmp_path / "p" / "m.slf", "--geo", src, "-o", out], "convert": ["convert", src, out]}[tool]
    if tool == "merge":
        assert ab("partition", src, "-n", 3, "-o", tmp_path / "p").returncode == 0
    traced = [strace, "-f", "-qq", "-o", str(log), "-e", "trace=sync_file_range", EXE]
    r = run(traced + [str(c) for c in cmd], capture_output=True, text=True, env=ENV)
    if r.returncode != 0 and "ptrace" in r.stderr:
        pytest.skip("strace could not trace here (ptrace refused)")
    assert r.returncode == 0, r.stderr
    size = out.stat().st_size
    assert size > 12 << 20
    ranges = []
    for line in log.read_text().splitlines():
        m = re.search(r"sync_file_range\(\d+, (\d+), (\d+), SYNC_FILE_RANGE_WRITE\) = 0", line)
        if m:
            ranges.append((int(m.group(1)), int(m.group(2))))
    assert ranges, log.read_text()
    assert ranges[0][0] == 0 and sum(n for _, n in ranges) == size, ranges
    assert all(a + n == b for (a, n), (b, _) in zip(ranges, ranges[1:])), ranges
    assert all(n >= 4 << 20 for _, n in ranges[:-1]), ranges
