"""`anabranch bench` (once, on a tiny case, 2 ranks: no timing asserted), `bench-plot`, and
`tune` here and on recorded Lustre output."""
import json
import os
import stat
import sys

import pytest

from conftest import EXE, MPI_ENV as ENV, MPIEXEC, assert_status, emulated_nodes, mpirun, run


@pytest.mark.mpi
def test_bench_runs_every_strategy_and_verifies(tmp_path):
    out = tmp_path / "r.json"
    proc = run(["timeout", "300", MPIEXEC, "-n", "2", EXE, "bench", "--generate", "3000", "--frames", "2", "--repeat", "2",
                "--read", "--dir", str(tmp_path), "-o", str(out)], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    j = json.loads(out.read_text())
    names = {r["strategy"] for r in j["results"]}
    serafin = {"file-per-process", "independent", "collective", "aggregated", "aggregated-async"}
    # tecplot always; hdf5 and cgns when built with parallel HDF5
    assert names in (serafin | {"tecplot"}, serafin | {"hdf5", "cgns", "tecplot"})
    for r in j["results"]:
        assert r["verified"] and len(r["write_seconds"]) == 2
        assert len(r["close_seconds"]) == 2
        assert r["files"] == (2 if r["strategy"] == "file-per-process" else 1)
    # --read: every read strategy on its file, the writer's and another decomposition, beside plain pread.
    reads = {(r["strategy"], r["file"], r["decomposition"]) for r in j["read"]["results"]}
    assert {("aggregated", "serafin", "the writer's"), ("independent", "serafin", "the writer's"),
            ("collective", "serafin", "the writer's"), ("aggregated", "serafin", "P+1 blocks"),
            ("file-per-process", "file per rank", "the writer's")} <= reads
    for r in j["read"]["results"]:
        assert r["verified"] and len(r["read_seconds"]) == 2 and r["read_mbs_median"] > 0, r
        assert set(r["phases_seconds_per_rank"]) == {"read", "exchange", "wait"}
    assert j["read"]["raw_read_mbs"] > 0
    assert j["config"]["ranks"] == 2 and j["raw_disk_mbs"] > 0 and j["machine"]["mpi"]
    assert j["config"]["nodes"] == min(2, emulated_nodes())  # the emulated nodes are seen as nodes
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # the bench cleans up after itself
    pytest.importorskip("matplotlib")
    r = run([EXE, "bench-plot", str(out), "-o", str(tmp_path / "p.png")], capture_output=True, text=True,
            env=dict(os.environ, PYTHON=os.environ.get("PYTHON", "python3")))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = run([EXE, "bench-plot", str(out), "--metric", "read_mbs_median", "-o", str(tmp_path / "r.png")],
            capture_output=True, text=True, env=dict(os.environ, PYTHON=os.environ.get("PYTHON", "python3")))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "bad.json").write_text('{"config": ')
    (tmp_path / "other.json").write_text('{"a": 1}')
    for bad, words, status in (("bad.json", "not JSON (line 1", 1), ("other.json", "not `anabranch bench -o` results", 1),
                               ("missing.json", "File does not exist", 2)):  # a file that does not exist: the command line
        r = run([EXE, "bench-plot", str(tmp_path / bad), "-o", str(tmp_path / "q.png")], capture_output=True, text=True,
                env=dict(os.environ, PYTHON=os.environ.get("PYTHON", "python3")))
        assert_status(r, status, words)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "Traceback" not in r.stderr


BENCH = """
import json, sys, anabranch
from mpi4py import MPI
comm = MPI.COMM_WORLD
report = anabranch.bench(generate=3000, frames=2, repeat=1, strategies=["independent", "aggregated"], read=True,
                         dir=sys.argv[1])
if comm.rank == 0:
    assert [r["strategy"] for r in report["results"]] == ["independent", "aggregated"], report["results"]
    assert all(r["verified"] for r in report["results"] + report["read"]["results"])
    assert report["config"]["ranks"] == comm.size
else:
    assert report is None  # the report is rank 0's
print("done", comm.rank)
"""


@pytest.mark.mpi
def test_bench_from_python(tmp_path):
    """The bench engine from the library (anabranch.bench over ab_command), at 3 ranks."""
    pytest.importorskip("mpi4py")
    pytest.importorskip("anabranch", reason="the Python package is not built (PYTHONPATH=<build>/python)")
    script = tmp_path / "bench.py"
    script.write_text(BENCH)
    (tmp_path / "work").mkdir()
    proc = mpirun(3, sys.executable, script, tmp_path / "work")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("done") == 3
    assert list((tmp_path / "work").iterdir()) == []


@pytest.mark.mpi
def test_bench_on_a_partitioned_mesh(ab, tmp_path):
    ab("generate", "-n", 3000, "-o", tmp_path / "m.slf")
    (tmp_path / "p").mkdir()
    ab("partition", tmp_path / "m.slf", "-n", 3, "-o", tmp_path / "p", "--layout", "concat")
    proc = run(["timeout", "300", MPIEXEC, "-n", "3", EXE, "bench", "--mesh", str(tmp_path / "m.slf"), "--plan",
                str(tmp_path / "p" / "m.slf"), "--frames", "1", "--repeat", "1", "--strategies", "aggregated,collective",
                "--dir", str(tmp_path), "--json"], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr
    j = json.loads(proc.stdout)
    assert all(r["verified"] for r in j["results"]) and j["config"]["plan"].endswith("m.slf")


def test_tune_here(ab, tmp_path):
    r = ab("tune", tmp_path, "--ranks", 8, "--json")
    assert r.returncode == 0, r.stderr
    j = r.json()
    assert j["file_system"] != "lustre" and j["writers_per_node"] == 2
    assert "not a parallel file system" in j["notes"][0]
    assert j["mpiio_hints"].startswith("cb_nodes=2")


def test_tune_lustre_from_recorded_lfs_output(ab, tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    lfs = fake / "lfs"
    osts = "".join(f"scratch-OST{i:04x}_UUID  1000000  1000  999000   1% /lustre[OST:{i}]\n" for i in range(12))
    lfs.write_text("#!/bin/sh\ncase \"$1\" in\n"
                   "getstripe) echo 'stripe_count:  1 stripe_size:   1048576 pattern:       0 stripe_offset: -1';;\n"
                   "df) printf 'UUID 1K-blocks Used Available Use%% Mounted on\\n"
                   "scratch-MDT0000_UUID 1000 10 990 1%% /lustre[MDT:0]\\n" + osts.replace("%", "%%").replace("\n", "\\n") +
                   "\\nfilesystem_summary: 12000000 12000 11988000 1%% /lustre\\n';;\nesac\n")
    lfs.chmod(lfs.stat().st_mode | stat.S_IEXEC)
    env_path = f"{fake}:{os.environ['PATH']}"
    r = run([EXE, "tune", str(tmp_path), "--fs", "lustre", "--ranks", "64", "--nodes", "4", "--json"], capture_output=True,
            text=True, env=dict(os.environ, PATH=env_path))
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["osts"] == 12 and j["current_stripe_count"] == 1 and j["current_stripe_size"] == 1048576
    # 8 writers want 16 stripes; at most 66% of 12 OSTs = 7.
    assert j["writers"] == 8 and j["stripe_count"] == 7
    assert "striping_factor=7" in j["mpiio_hints"] and j["lfs_command"].startswith("lfs setstripe -c 7")
