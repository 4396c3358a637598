"""Shared fixtures for the command-line tests: the executable, the TELEMAC data, a runner."""
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

EXE = os.environ.get("ANABRANCH_EXE") or shutil.which("anabranch")
DATA = pathlib.Path(os.environ.get("AB_TELEMAC_DATA", pathlib.Path(__file__).parents[3] / "shared/data/telemac"))


MPIEXEC = os.environ.get("AB_MPIEXEC", "mpiexec")
# Tests run as root in containers, with more ranks than cores: set here, never in users' commands.
# Emulated nodes (ANABRANCH_TEST_NODES, MPIR_CVAR_NUM_CLIQUES) come from ctest's environment.
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1", ANABRANCH_PROGRESS="0")


def emulated_nodes():
    """The nodes this run's MPI jobs are spread over on this machine (1: none emulated)."""
    return int(os.environ.get("ANABRANCH_TEST_NODES") or os.environ.get("MPIR_CVAR_NUM_CLIQUES") or 1)


def pytest_configure(config):
    config.addinivalue_line("markers", "mpi: launched by mpiexec; the MPICH and emulated-node runs select these (-m mpi)")
    config.addinivalue_line("markers", "faults: full disks, file-size limits, signals (test_faults.py)")


def mpirun(n, *args, timeout=120, preexec_fn=None, env=None):
    """Runs `mpiexec -n N ARGS...` under a timeout; returns the CompletedProcess (text)."""
    return subprocess.run(["timeout", str(timeout), MPIEXEC, "-n", str(n), *map(str, args)], capture_output=True, text=True,
                          env=dict(MPI_ENV, **(env or {})), preexec_fn=preexec_fn)


CRASH = re.compile(r"Segmentation fault|Caught signal|exited on signal|core dumped|Aborted \(signal")


def assert_failed_cleanly(proc, context=""):
    """A failure as the fault rules want it: a non-zero exit, no timeout, no rank crashed."""
    assert proc.returncode not in (0, 124, 137), (context, proc.returncode, proc.stderr)
    assert not CRASH.search(proc.stdout + proc.stderr), (context, proc.returncode, proc.stderr)


def said(folder, ranks):
    """What each rank of a test job wrote to folder/said.RANK (one file per rank: lines on a
    shared stdout may interleave)."""
    return [(folder / f"said.{r}").read_text() for r in range(ranks)]


def error_lines(stderr):
    """anabranch's own error lines in a run's stderr (the MPI library and launcher add theirs)."""
    return [line for line in stderr.splitlines() if line.startswith(("anabranch ", "partel: ", "gretel: ")) and ": error: " in line]


class Result:
    def __init__(self, proc):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    def json(self):
        return json.loads(self.stdout)


@pytest.fixture
def ab():
    """Runs `anabranch ARGS...`; returns a Result (never raises on a non-zero exit)."""
    if not EXE:
        pytest.skip("anabranch executable not found (set ANABRANCH_EXE)")

    def run(*args, cwd=None, timeout=600, stdin=None):
        env = dict(os.environ, ANABRANCH_PROGRESS="0")
        proc = subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env,
                              input=stdin)
        return Result(proc)

    return run


@pytest.fixture
def data():
    if not (DATA / "geo_gouttedo.slf").exists():
        pytest.skip(f"TELEMAC fixtures absent: {DATA}")
    return DATA


def fixture_files():
    return sorted(DATA.glob("*.slf")) if DATA.exists() else []


# Skips are allowed where a user's machine may lack something (the TELEMAC data, root for a
# tmpfs, ParaView); the full suite (scripts/test.sh, CI) sets AB_REQUIRE_ALL=1 and then
# fails on any skip. The count and the reasons are printed either way.
_skips = []


def pytest_runtest_logreport(report):
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _skips.append((report.nodeid, reason))


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"tests skipped: {len(_skips)}")
    for nodeid, reason in _skips:
        terminalreporter.write_line(f"  {nodeid}: {reason}")
    if _skips and os.environ.get("AB_REQUIRE_ALL") == "1":
        terminalreporter.write_line("AB_REQUIRE_ALL=1: the full suite allows no skip (set AB_ALLOW_SKIPS=1 for scripts/test.sh "
                                    "on a machine without the TELEMAC data)", red=True)


def pytest_sessionfinish(session, exitstatus):
    if _skips and os.environ.get("AB_REQUIRE_ALL") == "1" and session.exitstatus == 0:
        session.exitstatus = 1


@pytest.fixture
def small_disk(tmp_path):
    """A 600 KiB file system: full after a few frames of gouttedo."""
    d = tmp_path / "small"
    d.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(d)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    yield d
    subprocess.run(["umount", "-l", str(d)], check=True)
