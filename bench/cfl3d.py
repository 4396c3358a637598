#!/usr/bin/env python3
"""NASA CFL3D's restart file written through anabranch: CFL3D's own build against the one
linked with integrations/cfl3d/anabranch_cfl3d.F, side by side on the same machine.

Given the two `cfl3d_mpi` executables (CFL3D's own build and the anabranch-linked one, see
docs/cfl3d.md) and a case folder (cfl3d.inp and the files it names), the bench runs the case
at each rank count (--ranks), first with CFL3D's own build, then with the anabranch build,
each in a fresh copy of the case under --workdir (never in the case folder; the outputs the
deck names are not copied). Rank 0 is CFL3D's host, so every rank count must be 2 or more.
Per run it reports:

  wall      seconds of the whole `mpiexec` run, measured around it;
  dumps     how many times the restart file was written (cfl3d.out's "writing restart file"
            groups; --nwrest sets the deck's nwrest for every run);
  window, write, trunc
            the restart write as seen from outside, the same way for both builds, nothing of
            CFL3D changed: every rank runs under `strace -ff --seccomp-bpf -ttt -T -y -e
            trace=openat,close,ftruncate,pwrite64,pwritev` (the seccomp filter stops a process
            only at those calls). The host (rank 0) is the process that OPENs the deck's
            restart name itself, in mgblk.F before each dump (main.F and setup.F open it at
            start-up: the last `dumps` OPENs count). A dump's window is rank 0's time from
            that OPEN to the last close of the file before the next one. It includes the wait
            for the owners to finish their cycle: CFL3D's host gets each cycle's residuals
            early in the cycle and reaches the dump while the owners still iterate (seconds
            on a large case, in both builds alike). The write span leaves that wait out: from
            the dump's first write into the file once the first block's owner is ready, to
            the close. In anabranch's route that is the owners' first pwrite (an owner
            writes its block once the host has sent it the block's offset). In CFL3D's own
            route it is the first modification of the file in the window, seen by the bench
            itself through inotify: the host touches the file only once the first block's
            owner has sent it its first value (thetay), then gfortran truncates the file
            behind the first record and holds the small header records in its buffer until
            the first array has come (a dump that fits in that buffer is written at the
            close, and its span is then the window). Its plain WRITEs are not traced (a
            1.5 GB dump is 12,000 write calls: tracing them would slow CFL3D's side alone);
            the stops thus fall on anabranch's side: about 35 a block, the owners' pwrites
            (JSON owner_pwrites), against 3 a dump in CFL3D's route; a stop costs some tens
            of microseconds. trunc: rank 0's seconds inside ftruncate of the file (up to some
            tenths of a second when the previous dump is still being written back). CFL3D's
            truncation is inside its write span; anabranch's host makes the dump's file
            (restart.bin.part, renamed restart.bin at the dump's last block) as the dump
            starts, while the owners still iterate, so its truncation is in the window but
            not in the span;
  messages  through rank 0 in the anabranch build's dumps: 3 a block in the run's first dump
            (block by block), the host's own count in each later one (written at once: 3 a
            rank that owns blocks);
  ab_host   anabranch's own figure (ANABRANCH_CFL3D_VERBOSE=1, stderr): the host's seconds
            in WREST summed over blocks and dumps (the window, measured inside);
  owners    the owners' seconds writing their blocks (the same lines), summed: the part of
            ab_host spent in anabranch's writes (one owner after another in a dump written
            block by block, side by side in one written at once);
  bytes     size of restart.bin;
  and, on the anabranch rows, whether restart.bin, plot3dg.bin, plot3dq.bin, cfl3d.res and
  cfl3d.turres are byte for byte those of CFL3D's own run at the same rank count.
A dump's cost measured the other way (--once): each build is also run with one dump only
(nwrest beyond the cycles) and (wall - wall_once) / (dumps - dumps_once) is printed; on a
loaded machine this difference of two whole runs is far noisier than the write span.

Then a restart (--no-restart skips it): the anabranch-written restart.bin of the largest rank
count is copied into two more copies of the case, the deck changed to irest 1, one mesh
level (mseq 1, the finest level's ncyc and mit lines; --restart-cycles sets ncyc), and both
builds run it at --restart-ranks (default: the smallest --ranks minus one, at least 2), so
that the file is read on another rank count than it was written: CFL3D's own build reads it
through its host; the anabranch build reads every block on its owner (the "bytes read"
lines are counted). cfl3d.res, cfl3d.turres, restart.bin and the PLOT3D files of the two
restarts are compared. Also printed: whether CFL3D's own restart.bin is the same at every
rank count.

The bench changes no environment of CFL3D except ANABRANCH_CFL3D_VERBOSE=1 on the anabranch
runs (ANABRANCH_CFL3D is removed there) and Open MPI's run-as-root/oversubscribe defaults
when unset. Run it under `nice` on a shared machine: the runs inherit it. Times on a
machine shared with other work are indicative only; `sync` is called before each run so that
one run's dirty pages are not flushed in the next.

CFL3D is not part of anabranch: without the two executables and a case (arguments or
CFL3D_MPI, CFL3D_ANABRANCH_MPI, CFL3D_CASE) the bench says so and exits 0.

  python3 bench/cfl3d.py --cfl3d $CFL3D/build/cfl/mpi/cfl3d_mpi \\
      --cfl3d-anabranch build-ab/mpi/cfl3d_mpi --case axibump9 --ranks 4,8 --json cfl3d.json
  MPIEXEC="mpiexec --oversubscribe --bind-to none" nice python3 bench/cfl3d.py --ranks 8 --no-restart
"""
import argparse
import ctypes
import importlib.util
import json
import os
import pathlib
import re
import select
import shlex
import shutil
import struct
import subprocess
import sys
import threading
import time

OUTPUT_SLOTS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 12)  # deck's file list: plot3dg .. out20, restart
COMPARED = ("restart.bin", "plot3dg.bin", "plot3dq.bin", "cfl3d.res", "cfl3d.turres")


def fail(msg):
    print(f"bench/cfl3d.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


# --- the input deck ------------------------------------------------------------------------

def deck_files(lines):
    """The 13 file names after the deck's first line (grid, plot3dg, plot3dq, output, res,
    turres, blomax, out15, prout, out20, ovrlp, patch, restart)."""
    return [l.strip() for l in lines[1:14]]


# The deck's edits are anabranch-cfl3d's (integrations/cfl3d/anabranch_cfl3d_tool.py).
_spec = importlib.util.spec_from_file_location(
    "anabranch_cfl3d_tool", pathlib.Path(__file__).resolve().parent.parent / "integrations" / "cfl3d" / "anabranch_cfl3d_tool.py")
deck = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(deck)


def set_field(lines, words, field, value):
    try:
        deck.set_field(lines, words, field, value, path="cfl3d.inp")
    except deck.Error as e:
        fail(str(e))


def get_field(lines, words, field):
    try:
        return deck.get_field(lines, words, field, path="cfl3d.inp")
    except deck.Error as e:
        fail(str(e))


def finest_ncyc(lines):
    try:
        return deck.finest_ncyc(lines, path="cfl3d.inp")
    except deck.Error as e:
        fail(str(e))


# --- one run -------------------------------------------------------------------------------

def same(a, b):
    """Byte for byte equal (None when one of them is missing)."""
    if not (a.exists() and b.exists()):
        return None
    if a.stat().st_size != b.stat().st_size:
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 24), fb.read(1 << 24)
            if x != y:
                return False
            if not x:
                return True


def prepare(case, d, deck_edit, start=None):
    d.mkdir(parents=True)
    lines = (case / "cfl3d.inp").read_text().split("\n")
    files = deck_files(lines)
    outputs = {files[k] for k in OUTPUT_SLOTS}
    for f in case.iterdir():
        if f.is_file() and f.name not in outputs:
            shutil.copy(f, d / f.name)
    deck_edit(lines)
    (d / "cfl3d.inp").write_text("\n".join(lines))
    if start:
        shutil.copy(start, d / files[12])
    return files[12]


class Modified:
    """The times (time.time(), the clock of strace -ttt) at which the bench sees a file of a
    folder modified (inotify IN_MODIFY, Linux; nothing elsewhere). Identical events pile up
    into one while unread, so the thread wakes at most every 5 ms: the first write of a burst
    is seen at once, and the watch costs the run next to nothing."""

    def __init__(self, folder, name):
        self.name, self.times, self.fd, self.stop = name, [], -1, False
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
            if self.fd >= 0 and libc.inotify_add_watch(self.fd, os.fsencode(folder), 0x2) < 0:  # IN_MODIFY
                os.close(self.fd)
                self.fd = -1
        except (OSError, AttributeError):
            self.fd = -1
        if self.fd >= 0:
            self.thread = threading.Thread(target=self.loop, daemon=True)
            self.thread.start()

    def loop(self):
        while not self.stop:
            if not select.select([self.fd], [], [], 0.2)[0]:
                continue
            now = time.time()
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                continue
            pos = 0
            while pos + 16 <= len(data):
                ln = struct.unpack_from("iIII", data, pos)[3]
                if data[pos + 16:pos + 16 + ln].rstrip(b"\0").decode(errors="replace") == self.name:
                    self.times.append(now)
                pos += 16 + ln
            time.sleep(0.005)

    def close(self):
        if self.fd >= 0:
            self.stop = True
            self.thread.join()
            os.close(self.fd)
        return self.times if self.fd >= 0 else None


def dump_spans(tdir, restart, n, modified):
    """From the straced ranks' files (strace -ff): the host is the process that OPENs the
    deck's restart name itself (mgblk.F; the other opens name the full path). Per dump, the
    last n: the host's window, from that OPEN to the last close of the file before the next
    such OPEN; and the write span, from the dump's first write of block data to that close:
    the first pwrite into the file by another rank than the host (the owners, anabranch's
    route), else the first modification of the file inotify saw in the window (CFL3D's own
    route: its host writes nothing before the first block's first array has come), else the
    whole window (a dump small enough to stay in gfortran's buffer until the close). Also the
    traced pwrite calls into the file per dump."""
    path = os.path.realpath(restart)
    opened = re.compile(r'\bopen(?:at)?\((?:[^,]*, )?"' + re.escape(restart.name) + '"')
    # anabranch writes a dump to restart.bin.part, renamed restart.bin at its last block
    closed = re.compile(r"\bclose\(\d+<" + re.escape(path) + "(?:\\.part)?>")
    wrote = re.compile(r"\bpwrite(?:v|v2|64)\(\d+<" + re.escape(path) + "(?:\\.part)?>")
    trunc = re.compile(r"\bftruncate\(\d+<" + re.escape(path) + "(?:\\.part)?>")
    host, others = None, []
    for f in sorted(tdir.glob("trace.*")):
        ev = []
        for line in f.read_text(errors="replace").splitlines():
            m = re.match(r"^(?:\d+\s+)?(\d+\.\d+)\s+(.*?)(?:\s+<([0-9.]+)>)?$", line)
            if not m:
                continue
            t, call, spent = float(m.group(1)), m.group(2), float(m.group(3) or 0)
            for k, rx in (("open", opened), ("close", closed), ("write", wrote), ("trunc", trunc)):
                if rx.search(call):
                    ev.append((t, k, spent))
                    break
        if any(k == "open" for _, k, _ in ev):
            host = ev
        else:
            others += [t for t, k, _ in ev if k == "write"]
    if host is None or not n:
        return [], [], [], []
    wins = []
    for t, k, spent in host:
        if k == "open":
            wins.append([t, t, 0.0])
        elif wins and k == "close":
            wins[-1][1] = t
        elif wins and k == "trunc":
            wins[-1][2] += spent
    wins = wins[len(wins) - n:]
    spans, writes = [], []
    for a, b, _ in wins:
        ow = [t for t in others if a <= t <= b]
        seen = [t for t in modified or [] if a <= t <= b]
        first = min(ow) if ow else min(seen) if seen else a
        spans.append(b - first)
        writes.append(len(ow))
    return [b - a for a, b, _ in wins], spans, writes, [c for _, _, c in wins]


def run_case(a, build, exe, case, ranks, name, deck_edit, start=None):
    d = a.work / name
    restart_name = prepare(case, d, deck_edit, start)
    env = dict(os.environ)
    for k, v in (("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
                 ("OMPI_MCA_rmaps_base_oversubscribe", "1")):
        env.setdefault(k, v)
    env.pop("ANABRANCH_CFL3D", None)
    env.pop("ANABRANCH_CFL3D_VERBOSE", None)
    if build == "anabranch":
        env["ANABRANCH_CFL3D_VERBOSE"] = "1"
    mpiexec = shlex.split(a.mpiexec)
    tdir = d / "strace"
    if a.strace:
        tdir.mkdir()
        cmd = mpiexec + ["-n", str(ranks), a.strace, "-ff", "--seccomp-bpf", "-qq", "-ttt", "-T", "-y", "-e",
                         "trace=?open,openat,close,ftruncate,pwrite64,pwritev,?pwritev2", "-o", str(tdir / "trace"), exe]
    else:
        cmd = mpiexec + ["-n", str(ranks), exe]
    print(f"-- {name}: {' '.join(shlex.quote(c) for c in cmd)}", flush=True)
    os.sync()
    watch = Modified(d, restart_name) if a.strace else None
    t0 = time.perf_counter()
    # the deck on standard input, as CFL3D is run (its host copies it to tempz3y2x1.inp)
    with open(d / "cfl3d.inp") as deck_in, open(d / "run.log", "w") as out, open(d / "run.err", "w") as err:
        try:
            rc = subprocess.run(cmd, cwd=d, env=env, stdin=deck_in, stdout=out, stderr=err, timeout=a.timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    wall = time.perf_counter() - t0
    modified = watch.close() if watch else None
    status = (d / "cfl3d.error").read_text(errors="replace") if (d / "cfl3d.error").exists() else ""
    if rc != 0 or "terminated normally" not in status:
        fail(f"{name}: CFL3D failed (exit {rc}); see {d}/cfl3d.error, run.err, cfl3d.out")
    out_text = (d / "cfl3d.out").read_text(errors="replace").splitlines()
    dumps = sum(1 for i, l in enumerate(out_text) if "writing restart file for block" in l and i and not out_text[i - 1].strip())
    err = (d / "run.err").read_text(errors="replace")
    host = [float(x) for x in re.findall(r"anabranch_cfl3d: host block\s+\d+:\s+([0-9.]+) s \(anabranch(?:, at once)?\)", err)]
    # messages through rank 0: 3 a block in a dump written block by block, the host's own
    # count in a dump written at once
    by_block = len(re.findall(r"anabranch_cfl3d: host block\s+\d+:\s+[0-9.]+ s \(anabranch\)", err))
    at_once = [(int(b), int(m)) for b, m in re.findall(r"host dump of\s+(\d+) blocks at once:\s+(\d+) messages", err)]
    own = re.findall(r"anabranch_cfl3d: rank\s+\d+ block\s+\d+:\s+(\d+) bytes written in\s+([0-9.]+) s", err)
    read = re.findall(r"anabranch_cfl3d: rank\s+\d+ block\s+\d+:\s+(\d+) bytes read in\s+([0-9.]+) s", err)
    wins, spans, writes, trunc = dump_spans(tdir, d / restart_name, dumps, modified) if a.strace else ([], [], [], [])
    ok = len(wins) == dumps and dumps
    if a.strace and not a.keep_traces:
        shutil.rmtree(tdir)
    r = {"name": name, "build": build, "ranks": ranks, "dir": str(d), "wall_s": wall, "dumps": dumps,
         "window_s": wins, "write_s": spans, "owner_pwrites": writes,
         "window_sum_s": sum(wins) if ok else None, "write_sum_s": sum(spans) if ok else None,
         "truncate_s": trunc, "truncate_sum_s": sum(trunc) if ok else None,
         "restart_bytes": (d / restart_name).stat().st_size, "restart": str(d / restart_name)}
    if build == "anabranch":
        r.update(ab_host_s=sum(host) if host else None, ab_host_blocks=len(host),
                 owners_s=sum(float(t) for _, t in own) if own else None, owners_bytes=sum(int(b) for b, _ in own),
                 read_blocks=len(read), read_bytes=sum(int(b) for b, _ in read),
                 read_s=sum(float(t) for _, t in read) if read else None,
                 rank0_messages_block_by_block=3 * by_block, dumps_at_once=len(at_once),
                 rank0_messages_at_once=[m for _, m in at_once])
        if dumps and not host:
            fail(f"{name}: the anabranch build printed no 'host block' line: is it linked with anabranch_cfl3d.F?")
    return r


def compare(r, ref):
    d, e = pathlib.Path(r["dir"]), pathlib.Path(ref["dir"])
    rn = pathlib.Path(r["restart"]).name
    r["identical"] = {f: same(d / (rn if f == "restart.bin" else f), e / (rn if f == "restart.bin" else f)) for f in COMPARED}


def fmt(x, w, p=2):
    return f"{x:{w}.{p}f}" if isinstance(x, (int, float)) else f"{'-':>{w}}"


def table(title, runs):
    print(f"\n{title}")
    print(f"{'ranks':>5} {'build':<10} {'wall s':>8} {'dumps':>5} {'window':>8} {'write':>7} {'write, each dump':>22} {'trunc':>6} "
          f"{'ab_host':>8} {'owners':>7} {'bytes':>13}  identical to CFL3D's own (restart plot3dg plot3dq res turres)")
    for r in runs:
        each = " ".join(f"{x:.2f}" for x in r["write_s"][:4] if x is not None) + (" ..." if len(r["write_s"]) > 4 else "")
        ident = ""
        if "identical" in r:
            ident = " ".join({True: "yes", False: "NO", None: "n/a"}[r["identical"][f]] for f in COMPARED)
        print(f"{r['ranks']:>5} {r['build']:<10} {fmt(r['wall_s'], 8, 1)} {r['dumps']:>5} {fmt(r['window_sum_s'], 8)} "
              f"{fmt(r['write_sum_s'], 7)} {each or '-':>22} {fmt(r['truncate_sum_s'], 6)} {fmt(r.get('ab_host_s'), 8)} "
              f"{fmt(r.get('owners_s'), 7)} "
              f"{r['restart_bytes']:>13}  {ident}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cfl3d", default=os.environ.get("CFL3D_MPI"), help="CFL3D's own cfl3d_mpi (default: $CFL3D_MPI)")
    ap.add_argument("--cfl3d-anabranch", default=os.environ.get("CFL3D_ANABRANCH_MPI"),
                    help="cfl3d_mpi linked with anabranch_cfl3d.F (default: $CFL3D_ANABRANCH_MPI)")
    ap.add_argument("--case", default=os.environ.get("CFL3D_CASE"),
                    help="folder with cfl3d.inp and the files it reads (default: $CFL3D_CASE)")
    ap.add_argument("--ranks", default="4,8", help="rank counts, comma separated, each >= 2 (default 4,8)")
    ap.add_argument("--nwrest", type=int, help="the deck's nwrest for every run (a dump every nwrest cycles)")
    ap.add_argument("--restart-ranks", type=int, help="rank count of the restart runs (default: smallest --ranks - 1, >= 2)")
    ap.add_argument("--restart-cycles", type=int, help="ncyc of the restart runs (default: the deck's finest level's)")
    ap.add_argument("--no-restart", action="store_true", help="skip the restart runs")
    ap.add_argument("--once", action="store_true", help="also run each build with one dump (the wall-time difference)")
    ap.add_argument("--mpiexec", default=os.environ.get("MPIEXEC", "mpiexec"), help="MPI launcher and its options ($MPIEXEC)")
    ap.add_argument("--no-strace", action="store_true", help="run without strace (no window and write columns)")
    ap.add_argument("--keep-traces", action="store_true", help="keep each run's strace files (RUN/strace/trace.PID)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds allowed to one run")
    ap.add_argument("--workdir", default="bench-cfl3d", help="scratch folder (emptied)")
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()

    if not (a.cfl3d and a.cfl3d_anabranch and a.case):
        print("bench/cfl3d.py: skipped: CFL3D not given (--cfl3d and --cfl3d-anabranch: CFL3D's own cfl3d_mpi and the one "
              "linked with integrations/cfl3d/anabranch_cfl3d.F, --case: a folder with cfl3d.inp and its grid; or "
              "CFL3D_MPI, CFL3D_ANABRANCH_MPI, CFL3D_CASE; see docs/cfl3d.md)")
        return 0
    exes = {"cfl3d": os.path.realpath(a.cfl3d), "anabranch": os.path.realpath(a.cfl3d_anabranch)}
    for k, x in exes.items():
        if not os.access(x, os.X_OK):
            fail(f"{x} is not an executable")
    case = pathlib.Path(a.case).resolve()
    if not (case / "cfl3d.inp").exists():
        fail(f"{case} has no cfl3d.inp")
    lines = (case / "cfl3d.inp").read_text().split("\n")
    restart_name = deck_files(lines)[12]
    if "/" in restart_name:
        fail(f"cfl3d.inp names the restart file {restart_name}: the bench needs a name in the case folder")
    ranks = [int(r) for r in a.ranks.split(",")]
    if min(ranks) < 2:
        fail("every rank count must be >= 2 (rank 0 is CFL3D's host)")
    a.strace = None if a.no_strace else shutil.which("strace")
    if not a.no_strace and not a.strace:
        print("bench/cfl3d.py: no strace on PATH: no rank-0 dump times (--no-strace to silence)", file=sys.stderr)
    a.work = pathlib.Path(a.workdir).resolve()
    shutil.rmtree(a.work, ignore_errors=True)
    a.work.mkdir(parents=True)

    def base(lines):
        if a.nwrest:
            set_field(lines, ("ngrid", "nwrest"), 3, a.nwrest)

    def once(lines):
        base(lines)
        set_field(lines, ("ngrid", "nwrest"), 3, 99999)

    runs, failures = [], []
    for p in ranks:
        pair = {}
        for build in ("cfl3d", "anabranch"):
            pair[build] = run_case(a, build, exes[build], case, p, f"{build}-{p}", base)
            runs.append(pair[build])
        compare(pair["anabranch"], pair["cfl3d"])
        if not pair["anabranch"]["identical"]["restart.bin"]:
            failures.append(f"{p} ranks: the anabranch restart.bin differs from CFL3D's own")
        if a.once:
            for build in ("cfl3d", "anabranch"):
                o = run_case(a, build, exes[build], case, p, f"{build}-{p}-once", once)
                full = pair[build]
                ddiff = full["dumps"] - o["dumps"]
                full["once_wall_s"], full["once_dumps"] = o["wall_s"], o["dumps"]
                full["per_dump_by_difference_s"] = (full["wall_s"] - o["wall_s"]) / ddiff if ddiff > 0 else None
    own = [r for r in runs if r["build"] == "cfl3d"]
    across = all(same(pathlib.Path(own[0]["restart"]), pathlib.Path(r["restart"])) for r in own[1:])

    restarts = []
    if not a.no_restart:
        rp = a.restart_ranks or max(2, min(ranks) - 1)
        src = next(r for r in runs if r["build"] == "anabranch" and r["ranks"] == max(ranks))
        cycles = a.restart_cycles or finest_ncyc(lines)

        def again(lines):
            base(lines)
            try:
                deck.restart_deck(lines, cycles, path="cfl3d.inp")
            except deck.Error as e:
                fail(str(e))

        for build in ("cfl3d", "anabranch"):
            r = run_case(a, build, exes[build], case, rp, f"{build}-{rp}-restart", again, start=src["restart"])
            r["restart_from"] = src["name"]
            restarts.append(r)
        compare(restarts[1], restarts[0])
        if not all(restarts[1]["identical"][f] for f in ("cfl3d.res", "restart.bin")):
            failures.append(f"restart at {rp} ranks: cfl3d.res or restart.bin differs between the builds")
        if not restarts[1]["read_blocks"]:
            failures.append(f"restart at {rp} ranks: the anabranch build read no block through anabranch")

    where = ("seconds summed over the dumps; window: rank 0's, from its OPEN of restart.bin to the close; write: from the "
             "first write of block data to the close; trunc: rank 0 in ftruncate (strace, inotify); ab_host, owners: "
             "anabranch's own lines")
    table(f"{case.name}: {where}", runs)
    for r in runs:
        if r["build"] == "anabranch":
            print(f"{r['ranks']:>5} anabranch  messages through rank 0: {r['rank0_messages_block_by_block']} in the dumps "
                  f"written block by block ({r['dumps'] - r['dumps_at_once']}), "
                  f"{r['rank0_messages_at_once'] or '-'} in each dump written at once ({r['dumps_at_once']})")
    for r in runs:
        if r.get("per_dump_by_difference_s") is not None:
            print(f"{r['ranks']:>5} {r['build']:<10} one dump: {r['once_wall_s']:.1f} s wall; a dump by the difference of the "
                  f"runs: {r['per_dump_by_difference_s']:.2f} s")
    print(f"CFL3D's own restart.bin at {', '.join(map(str, ranks))} ranks: {'identical' if across else 'NOT identical'}")
    if restarts:
        rr = restarts[1]
        table(f"restart from {restarts[0]['restart_from']}'s restart.bin at {restarts[0]['ranks']} ranks, "
              f"{rr['dumps']} dump(s)", restarts)
        print(f"anabranch build: {rr['read_blocks']} blocks read by their owners, {rr['read_bytes']} bytes, "
              f"{fmt(rr['read_s'], 0, 3).strip()} s summed")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps({"case": str(case), "ranks": ranks, "runs": runs,
                                                    "own_restart_identical_across_ranks": across, "restarts": restarts},
                                                   indent=1))
    for f in failures:
        print(f"bench/cfl3d.py: FAILED: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
