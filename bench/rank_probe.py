#!/usr/bin/env python3
"""Runs one MPI rank's command and records, from outside it, what the rank cost: the bytes
it read and wrote through system calls (/proc/PID/io, read when the rank has exited and
before it is reaped) and its peak resident memory (the kernel's own count, from wait4;
nothing is reset). With AB_MPI_COUNT_LIB naming bench/mpi_count.c's library, the rank's MPI calls and the
bytes it sent are counted too. Writes OUT_DIR/rank.<rank>.json and exits with the rank's
status.
Usage (under mpiexec): rank_probe.py OUT_DIR COMMAND [ARGS...]"""
import json
import os
import pathlib
import signal
import sys


def rank_of_process():
    for name in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"):
        if name in os.environ:
            return int(os.environ[name])
    return 0


def main():
    out, cmd = pathlib.Path(sys.argv[1]), sys.argv[2:]
    counter = os.environ.get("AB_MPI_COUNT_LIB")  # bench/mpi_count.c: the rank's MPI calls too
    pid = os.fork()
    if pid == 0:
        try:
            if counter:
                os.environ["LD_PRELOAD"] = " ".join(filter(None, [counter, os.environ.get("LD_PRELOAD")]))
                os.environ["AB_MPI_COUNT_DIR"] = str(out)
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    for s in (signal.SIGTERM, signal.SIGINT):  # the launcher's signals go to the rank
        signal.signal(s, lambda sig, _: os.kill(pid, sig))
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped: /proc/PID/io still there
    io = {}
    try:
        for line in pathlib.Path(f"/proc/{pid}/io").read_text().splitlines():
            key, value = line.split(":")
            io[key] = int(value)
    except OSError:
        pass
    _, status, usage = os.wait4(pid, 0)
    rank = rank_of_process()
    record = {"rank": rank, "read": io.get("rchar"), "written": io.get("wchar"), "read_calls": io.get("syscr"),
              "peak_rss": usage.ru_maxrss * 1024, "status": os.waitstatus_to_exitcode(status)}
    counted = out / f"mpi.{rank}.json"
    if counter and counted.exists():
        calls = json.loads(counted.read_text())
        record["mpi_calls"] = sum(c for c, _ in calls.values())
        record["mpi_bytes"] = sum(b for _, b in calls.values())
        record["mpi"] = calls
    (out / f"rank.{rank}.json").write_text(json.dumps(record))
    code = os.waitstatus_to_exitcode(status)
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
