"""Progress where the time goes: on a terminal a line that updates (METIS and SCOTCH included,
which cannot say how far they are), nothing with -q, nothing when stderr is not a terminal
unless ANABRANCH_PROGRESS=1 asks for plain lines."""
import os
import pty
import subprocess

import pytest

from conftest import EXE, run

pytestmark = pytest.mark.skipif(not EXE, reason="anabranch executable not found (set ANABRANCH_EXE)")
ENV = {k: v for k, v in os.environ.items() if k != "ANABRANCH_PROGRESS"}


def on_terminal(*args, cwd):
    """Runs anabranch with stderr on a pseudo-terminal; returns (exit status, what it wrote there)."""
    main, sub = pty.openpty()
    proc = subprocess.Popen([EXE, *map(str, args)], stdout=subprocess.DEVNULL, stderr=sub, stdin=subprocess.DEVNULL, cwd=cwd,
                            env=ENV)
    os.close(sub)
    out = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the other side closed
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    return proc.wait(timeout=300), out.decode(errors="replace")


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("progress")
    r = run([EXE, "-q", "generate", "-o", d / "m.slf", "-n", "60000", "--frames", "3"], capture_output=True, env=ENV)
    assert r.returncode == 0
    return d


@pytest.mark.parametrize("method", ["metis", "scotch"])
def test_partitioner_shows_progress_on_a_terminal_and_not_with_q(work, method):
    rc, err = on_terminal("partition", work / "m.slf", "-n", "4", "--method", method, "-o", work / method, cwd=work)
    assert rc == 0, err
    assert f"\rpartition: {method.upper()}, " in err and "done (" in err, err
    rc, err = on_terminal("partition", work / "m.slf", "-n", "4", "--method", method, "-o", work / method, "-q", cwd=work)
    assert rc == 0 and err == "", err


@pytest.mark.parametrize("command", [["refine", "m.slf", "-o", "r.slf"], ["convert", "m.slf", "c.h5"],
                                     ["diff", "m.slf", "m.slf"], ["merge", "metis/m.slf", "--geo", "m.slf", "-o", "g.slf"]])
def test_long_commands_show_progress_on_a_terminal_and_not_with_q(work, command):
    if command[0] == "merge" and not (work / "metis").exists():
        assert run([EXE, "-q", "partition", "m.slf", "-n", "4", "-o", "metis"], cwd=work, env=ENV).returncode == 0
    rc, err = on_terminal(*command, cwd=work)
    assert rc == 0, err
    assert f"\r{command[0]}" in err and "done (" in err, err
    rc, err = on_terminal("-q", *command, cwd=work)
    assert rc == 0 and err == "", err


def test_not_a_terminal_is_quiet_unless_asked(work):
    r = run([EXE, "partition", "m.slf", "-n", "3", "-o", "p3"], cwd=work, capture_output=True, text=True, env=ENV)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    r = run([EXE, "partition", "m.slf", "-n", "3", "-o", "p3"], cwd=work, capture_output=True, text=True,
            env=dict(ENV, ANABRANCH_PROGRESS="1"))
    assert r.returncode == 0 and "partition: METIS, " in r.stderr and "\r" not in r.stderr, r.stderr


def test_progress_in_a_log_is_one_line_per_tenth(work):
    """Not a terminal, ANABRANCH_PROGRESS=1 (a batch job's log): a line at each tenth of the
    work, never the same tenth twice, never a carriage return."""
    r = run([EXE, "generate", "-o", "g.slf", "-n", "3000", "--frames", "7"], cwd=work, capture_output=True, text=True,
            env=dict(ENV, ANABRANCH_PROGRESS="1"))
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("generate g.slf: ")]
    pcts = [int(line.split(": ")[1].split("%")[0]) for line in lines]
    assert pcts and all(p % 10 == 0 for p in pcts) and pcts == sorted(set(pcts)) and pcts[-1] == 100, r.stderr
    assert "\r" not in r.stderr
