"""Shared fixtures for the command-line tests: the executable, the TELEMAC data, a runner."""
import contextlib
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess

import pytest

EXE = os.environ.get("ANABRANCH_EXE") or shutil.which("anabranch")
DATA = pathlib.Path(os.environ.get("AB_TELEMAC_DATA", pathlib.Path(__file__).parents[3] / "shared/data/telemac"))


MPIEXEC = os.environ.get("AB_MPIEXEC", "mpiexec")
# Tests run as root in containers, with more ranks than cores: set here, never in users' commands.
# Emulated nodes (ANABRANCH_TEST_NODES, MPIR_CVAR_NUM_CLIQUES) come from ctest's environment.
# A job whose ranks exit 1 (every refusal and fault test) ends at once, not after Open MPI's
# one-second grace between SIGTERM and SIGKILL for ranks already gone (2.4 s a job, 0.4 s
# without; a signal sent to mpiexec still reaches every rank first). Open MPI's ob1 messaging
# layer (shared memory, TCP between hosts) unless the environment names one: the default
# opens the cm layer, whose PSM and PSM2 libraries sleep at load, 0.2 s a job here (0.33 s
# against 0.13 s for a 2-rank convert), and these tests launch hundreds; the C++ and Python
# writer tests (ctest) keep Open MPI's default.
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1", ANABRANCH_PROGRESS="0",
               OMPI_MCA_odls_base_sigkill_timeout="0", OMPI_MCA_pml=os.environ.get("OMPI_MCA_pml", "ob1"))


def emulated_nodes():
    """The nodes this run's MPI jobs are spread over on this machine (1: none emulated)."""
    return int(os.environ.get("ANABRANCH_TEST_NODES") or os.environ.get("MPIR_CVAR_NUM_CLIQUES") or 1)


def pytest_configure(config):
    config.addinivalue_line("markers", "mpi: launched by mpiexec; the MPICH and emulated-node runs select these (-m mpi)")
    config.addinivalue_line("markers", "faults: full disks, file-size limits, signals (test_faults.py)")
    config.addinivalue_line("markers", "formats: what files hold, read back by independent readers (test_roundtrip.py); "
                                       "the emulated-node runs leave these out")
    config.addinivalue_line("markers", "generated: cases drawn at random (test_gen_*.py), which spread their ranks over "
                                       "emulated nodes themselves: Open MPI's one-node run takes them")


# A process ended by a signal fails the test that ran it, named by the signal, unless the test
# sends the signal itself (signal_ok=True) and then asserts the status it expects. Python
# reports a child killed by signal N as returncode -N; a launcher reports it as 128 + N
# (Open MPI's mpiexec for a rank killed by signal N, as MPICH's; `timeout` for the command
# it runs, when not re-raising the signal), and `timeout` gives 124 for a command it had to end.
LAUNCHERS = {"timeout", "mpiexec", "mpirun", "srun", os.path.basename(MPIEXEC)}


def launched(args):
    """Whether a command line is run by a launcher (mpiexec, timeout): its status reports a
    rank or command killed by signal N as 128 + N."""
    return bool(args) and os.path.basename(str(args[0])) in LAUNCHERS


def signal_of(returncode, launcher=False):
    """The signal that ended a process, from its returncode (None when it exited)."""
    if returncode is None:
        return None
    n = -returncode if returncode < 0 else returncode - 128 if launcher and returncode > 128 else 0
    try:
        return signal.Signals(n) if n > 0 else None
    except ValueError:
        return None


def describe(returncode, launcher=False):
    """A status for a message: `1`, `-11 (SIGSEGV)`, `139 (SIGSEGV)`, `124 (timed out)`."""
    sig = signal_of(returncode, launcher)
    if sig:
        return f"{returncode} ({sig.name})"
    if launcher and returncode == 124:
        return "124 (timed out)"
    return str(returncode)


def fail_on_signal(proc, args=None, signal_ok=False):
    """Fails the test when proc ended by a signal (or, under a launcher, a rank did, or
    `timeout` ended it) unless signal_ok; returns proc."""
    args = list(args if args is not None else getattr(proc, "args", None) or [])
    under = launched(args)
    sig = signal_of(proc.returncode, under)
    what = " ".join(map(str, args[:8])) + (" ..." if len(args) > 8 else "")
    err = proc.stderr if isinstance(getattr(proc, "stderr", None), str) else ""
    if sig and not signal_ok:
        pytest.fail(f"ended by signal {sig.name} (status {proc.returncode}): {what}\n{err[-3000:]}", pytrace=False)
    if under and proc.returncode == 124:
        pytest.fail(f"timed out (status 124): {what}\n{err[-3000:]}", pytrace=False)
    return proc


def run(args, signal_ok=False, **kw):
    """subprocess.run(args, **kw), failing the test on a death by signal (see fail_on_signal)."""
    return fail_on_signal(subprocess.run(args, **kw), args, signal_ok)


def mpirun(n, *args, timeout=120, preexec_fn=None, env=None, signal_ok=False):
    """Runs `mpiexec -n N ARGS...` under a timeout; returns the CompletedProcess (text). A rank
    ended by a signal, or the timeout, fails the test (signal_ok=True: the test sends it)."""
    cmd = ["timeout", str(timeout), MPIEXEC, "-n", str(n), *map(str, args)]
    return run(cmd, signal_ok, capture_output=True, text=True, env=dict(MPI_ENV, **(env or {})), preexec_fn=preexec_fn)


CRASH = re.compile(r"Segmentation fault|Caught signal|exited on signal|core dumped|Aborted \(signal|Process received signal")


def assert_status(proc, code, *texts):
    """The exact exit status `code`; a failure (1, 2) with no crash report in the output; each
    of texts in stderr. A status from a signal is named (SIGSEGV, ...)."""
    under = launched(getattr(proc, "args", None) or [])
    out = (proc.stdout or "") + (proc.stderr or "") if isinstance(proc.stderr, str) else ""
    assert proc.returncode == code, f"status {describe(proc.returncode, under)}, expected {describe(code, under)}\n{out[-3000:]}"
    if code in (1, 2):
        assert not CRASH.search(out), out[-3000:]
    for text in texts:
        assert text in proc.stderr, (text, proc.stderr[-3000:])


def assert_failed_cleanly(proc, context="", code=1):
    """A failure as the fault rules want it: exit status `code` (1: a fault), no timeout, no
    rank crashed."""
    __tracebackhide__ = True
    assert_status(proc, code)


@contextlib.contextmanager
def raises_exactly(cls, match=None):
    """pytest.raises(cls, match=...), and the exception is of that very class (not a subclass
    nor, through an `except Error`, a sibling: anabranch.IoError, not anabranch.FormatError)."""
    __tracebackhide__ = True
    with pytest.raises(cls, match=match) as info:
        yield info
    assert type(info.value) is cls, f"raised {type(info.value).__module__}.{type(info.value).__name__}, " \
                                    f"expected exactly {cls.__module__}.{cls.__name__}: {info.value}"


def said(folder, ranks):
    """What each rank of a test job wrote to folder/said.RANK (one file per rank: lines on a
    shared stdout may interleave)."""
    return [(folder / f"said.{r}").read_text() for r in range(ranks)]


def error_lines(stderr):
    """anabranch's own error lines in a run's stderr (the MPI library and launcher add theirs)."""
    return [line for line in stderr.splitlines() if line.startswith(("anabranch ", "partel: ", "gretel: ")) and ": error: " in line]


class Result:
    def __init__(self, proc):
        self.args = proc.args
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    def json(self):
        return json.loads(self.stdout)


@pytest.fixture
def ab():
    """Runs `anabranch ARGS...`; returns a Result (never raises on a non-zero exit). A run ended
    by a signal fails the test, named by the signal (signal_ok=True: the test sends it)."""
    if not EXE:
        pytest.skip("anabranch executable not found (set ANABRANCH_EXE)")

    def run_ab(*args, cwd=None, timeout=600, stdin=None, signal_ok=False):
        env = dict(os.environ, ANABRANCH_PROGRESS="0")
        return Result(run([EXE, *map(str, args)], signal_ok, capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env,
                          input=stdin))

    return run_ab



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
