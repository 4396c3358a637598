#!/usr/bin/env python3
"""TELEMAC writing its results through anabranch: one file from all ranks, no merge.

Runs a TELEMAC-2D or TELEMAC-3D case (default: the malpasset dam break of TELEMAC's
examples, with the characteristics scheme) on each rank count twice:
  classic    TELEMAC as it is: per-rank result files, merged by TELEMAC's own gretel;
  anabranch  the same steering file with integrations/telemac/anabranch_telemac.f added to
             its user Fortran: every rank writes its frames into the one global result
             during the run; anabranch's gretel (par_path) leaves that file as it is.
Then each parallel run is continued from its own result (COMPUTATION CONTINUED, PREVIOUS
COMPUTATION FILE), both ways: classic (TELEMAC's partel splits the previous computation,
gretel merges) and through anabranch (ANABRANCH_TELEMAC_RESTART=1: the ranks read their
nodes of the one file; --no-restart skips this). Each run goes through TELEMAC's runner
stage by stage (--split, -x to compile, --run, --merge), each timed; the anabranch runs
also report the time spent writing inside the run. Checks: on every rank count above 1
every anabranch result file, first and continued, is byte for byte the classic one; the
continued anabranch runs said they read the one file; the serial result and the parallel
ones agree within TELEMAC's own validation tolerances for the case (a serial run differs
numerically from a parallel one in TELEMAC itself). Prints a table and writes --json.

The configuration is TELEMAC's as it is (its incs_all must not name anabranch: the user
Fortran needs no module); the bench adds libs_all (-lanabranch_c), par_path and par_cmdexec.

TELEMAC is not part of anabranch: give a built TELEMAC tree (TELEMAC_ROOT or HOMETEL), its
configuration file and name (SYSTELCFG, USETELCFG, or --config-file/--config) and an
anabranch installation (--prefix, default: the one holding `anabranch` on PATH). Without
TELEMAC the bench says so and exits 0. Steps for users: docs/telemac.md.

  python3 bench/telemac.py --ranks 1,4 --json telemac.json
  python3 bench/telemac.py --ranks 4 --time-steps 800    # a shorter run
"""
import argparse
import configparser
import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
# TELEMAC's validation of this case (vnv_malpasset.py): last frame, serial against parallel,
# max absolute difference per variable (U, V, H, S, B).
DEFAULT_EPS = {"VELOCITY U": 0.016, "VELOCITY V": 0.010, "WATER DEPTH": 0.020, "FREE SURFACE": 0.020, "BOTTOM": 1e-15}


def fail(msg):
    print(f"bench/telemac.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


def read_serafin(path):
    """Title, variable names, NPOIN and frames [(time, [values per variable])] of a SERAFIN file."""
    data = pathlib.Path(path).read_bytes()
    order = ">" if struct.unpack(">i", data[:4])[0] == 80 else "<"
    pos = 0

    def rec():
        nonlocal pos
        n = struct.unpack(order + "i", data[pos:pos + 4])[0]
        out = data[pos + 4:pos + 4 + n]
        pos += 8 + n
        return out

    title = rec()[:72].decode("latin-1").strip()
    nbv = sum(struct.unpack(order + "2i", rec()))
    names = [rec()[:16].decode("latin-1").strip() for _ in range(nbv)]
    iparam = struct.unpack(order + "10i", rec())
    if iparam[9] == 1:
        rec()
    nelem, npoin, ndp, _ = struct.unpack(order + "4i", rec())
    rec(), rec()
    x = rec()
    rs = len(x) // npoin
    rec()
    fmt = order + ("f" if rs == 4 else "d")
    frames = []
    while pos < len(data):
        t = struct.unpack(fmt, rec())[0]
        vals = [struct.unpack(f"{order}{npoin}{'f' if rs == 4 else 'd'}", rec()) for _ in names]
        frames.append((t, vals))
    return title, names, npoin, frames


def compare_last_frames(anabranch, a, b, tolerances):
    """`anabranch diff` of the last frames of two results of the same mesh, the values only of
    the variables TELEMAC's validation checks, with its tolerances: (max |a - b| per
    variable, diff's exit status: 0 within the tolerances, 1 not)."""
    names = [v["name"] for v in json.loads(subprocess.run([anabranch, "info", "--json", str(a)], capture_output=True, text=True,
                                                          check=True).stdout)[0]["variables"]]
    checked = [n for n in names if n in tolerances]
    tol = [x for n in checked for x in ("--tol", f"{n}={tolerances[n]!r}")]
    r = subprocess.run([anabranch, "diff", str(a), str(b), "--frames=-1", "--values-only", "--json", "--variables", ",".join(checked),
                        *tol], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        fail(f"anabranch diff {a} {b}: {r.stderr.strip()}")
    return {v["name"]: v["max_abs"] for v in json.loads(r.stdout)["variables"]}, r.returncode


def derived_config(src, name, prefix, out):
    """The configuration with anabranch added as a user with an already-built TELEMAC adds it:
    the C library in libs_all (the runner substitutes libs* keys at run time; the compile
    command stored at TELEMAC's build, with its incs_all, stays as it was) and par_path
    (where the runner finds gretel) on anabranch's gretel."""
    cfg = configparser.RawConfigParser()
    cfg.optionxform = str
    cfg.read(src)
    if not cfg.has_section(name):
        fail(f"{src} has no configuration [{name}]")

    def value(key):
        if cfg.has_option(name, key):
            return cfg.get(name, key)
        return cfg.get("general", key) if cfg.has_option("general", key) else ""

    lib = prefix / "lib"
    if "anabranch" in value("incs_all"):
        fail(f"{src} [{name}]: incs_all names anabranch; the bench checks a configuration that does not")
    cfg.set(name, "libs_all", f"{value('libs_all')} -L{lib} -Wl,-rpath,{lib} -lanabranch_c".strip())
    cfg.set(name, "par_path", str(prefix / "libexec/anabranch/telemac"))
    cfg.set(name, "par_cmdexec", "<config>/partel < <partel.par> >> <partel.log>")
    with open(out, "w") as f:
        cfg.write(f)


def steering(src, dst, time_steps, fortran, previous=None):
    text = src.read_text(errors="replace")
    if previous:  # a continued run from the last record of `previous`
        text = re.sub(r"(?im)^\s*(COMPUTATION CONTINUED|PREVIOUS COMPUTATION FILE|INITIAL TIME SET TO ZERO)\s*[=:].*$", "", text)
        text += f"\nCOMPUTATION CONTINUED = YES\nPREVIOUS COMPUTATION FILE = '{previous}'\n"
    if time_steps:
        text, n = re.subn(r"(?im)^\s*NUMBER OF TIME STEPS\s*[=:].*$", f"NUMBER OF TIME STEPS = {time_steps}", text)
        if n == 0:
            text += f"\nNUMBER OF TIME STEPS = {time_steps}\n"
    if fortran:
        text, n = re.subn(r"(?im)^\s*FORTRAN FILE\s*[=:].*$", f"FORTRAN FILE = '{fortran}'", text)
        if n == 0:
            text += f"\nFORTRAN FILE = '{fortran}'\n"
    dst.write_text(text)


def user_fortran(case_dir, cas_text, integration, out):
    """A folder with the case's own user Fortran (a file or a folder) and anabranch's."""
    out.mkdir()
    m = re.search(r"(?im)^\s*FORTRAN FILE\s*[=:]\s*'?([^'\n]+?)'?\s*$", cas_text)
    if m:
        given = case_dir / m.group(1).strip()
        for f in sorted(given.iterdir()) if given.is_dir() else [given]:
            shutil.copy(f, out / f.name)
    shutil.copy(integration, out / "anabranch_telemac.f")


def results_files(cas_text):
    """The SERAFIN results the steering file names: RESULTS FILE (TELEMAC-2D), 3D RESULT FILE
    and 2D RESULT FILE (TELEMAC-3D)."""
    names = re.findall(r"(?im)^\s*(?:[23]D )?RESULTS? FILE\s*[=:]\s*'?([^'\n]+?)'?\s*$", cas_text)
    if not names:
        fail("the steering file names no RESULTS FILE")
    return [n.strip() for n in names]


def gretel_seconds(gretel, wd, ranks, result_format, prefix):
    """The merge step alone: gretel run on the run's folder with the answers TELEMAC's runner
    gives it (geometry, format, boundary file, result, format, parts, planes, method)."""
    answers = f"{prefix}GEO\nSERAFIN\n{prefix}CLI\n{prefix}RES\n{result_format}\n{ranks}\n0\n1\n"
    t0 = time.perf_counter()
    proc = subprocess.run([str(gretel)], cwd=wd, input=answers, capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"{gretel} failed in {wd}: {proc.stdout[-500:]}{proc.stderr[-500:]}")
    return time.perf_counter() - t0


def run_case(args, root, cfg_file, case, ranks, mode, work, previous=None):
    """One run through the runner's stages; returns the seconds of each and the result path.
    previous: a result to continue from (the run is then named <mode>-<ranks>-continued; the
    anabranch route reads it on every rank from the one file, ANABRANCH_TELEMAC_RESTART=1)."""
    d = work / (f"{mode}-{ranks}" + ("-continued" if previous else ""))
    shutil.copytree(case.parent, d)
    if previous:
        shutil.copy(previous, d / "previous.slf")
    cas_text = (d / case.name).read_text(errors="replace")
    fortran = None
    if mode == "anabranch":
        user_fortran(d, cas_text, args.integration, d / "user_fortran_anabranch")
        fortran = "user_fortran_anabranch"
    cas = d / f"bench_{mode}.cas"
    steering(d / case.name, cas, args.time_steps, fortran, "previous.slf" if previous else None)
    env = dict(os.environ, SYSTELCFG=str(cfg_file), USETELCFG=args.config, HOMETEL=str(root),
               PYTHONPATH=f"{root / 'scripts/python3'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    if previous and mode == "anabranch":
        env["ANABRANCH_TELEMAC_RESTART"] = "1"
    code = "telemac3d" if case.name.startswith("t3d") else "telemac2d"
    runner = [args.python, str(root / "scripts/python3" / f"{code}.py"), "--ncsize", str(ranks), "-w", str(d / "wd")]
    stages = [("split", "--split"), ("compile", "-x"), ("run", "--run"), ("merge", "--merge")]
    seconds, log = {}, ""
    for name, stage in stages:
        t0 = time.perf_counter()
        proc = subprocess.run(runner + [stage, cas.name], cwd=d, env=env, capture_output=True, text=True)
        seconds[name] = time.perf_counter() - t0
        log += proc.stdout + proc.stderr
        (d / "runner.log").write_text(log)
        if proc.returncode != 0 or "CORRECT END OF RUN" not in log and stage == "--run":
            fail(f"{mode} run on {ranks} ranks failed at {stage}: see {d / 'runner.log'}")
        if name == "run" and ranks > 1:
            fmt = "SERAFIND" if re.search(r"(?im)^\s*RESULTS FILE FORMAT\s*[=:]\s*'?SERAFIND", cas.read_text()) else "SERAFIN"
            gretel = (args.prefix / "libexec/anabranch/telemac/gretel" if mode == "anabranch"
                      else root / "builds" / args.config / "bin/gretel")
            seconds["gretel"] = gretel_seconds(gretel, d / "wd", ranks, fmt, "T3D" if code == "telemac3d" else "T2D")
    outs = [d / name for name in results_files(cas_text)]
    for out in outs:
        if not out.exists():
            fail(f"{mode} run on {ranks} ranks left no {out.name}: see {d / 'runner.log'}")
    if previous and mode == "anabranch" and ranks > 1 and "ANABRANCH: PREVIOUS COMPUTATION READ FROM" not in log:
        fail(f"the continued anabranch run on {ranks} ranks did not read the previous computation from the one file: "
             f"see {d / 'runner.log'}")
    spent = [float(t) for t in re.findall(r"ANABRANCH: \S+: \d+ FRAMES WRITTEN, OUTPUT TIME ([0-9.]+) S", log)]
    return {"seconds": seconds, "results": [str(o) for o in outs], "output_seconds": sum(spent) if spent else None,
            "frames": len(read_serafin(outs[0])[3]), "bytes": sum(o.stat().st_size for o in outs)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--telemac-root", default=os.environ.get("TELEMAC_ROOT") or os.environ.get("HOMETEL"),
                    help="a built TELEMAC tree (default: $TELEMAC_ROOT, $HOMETEL)")
    ap.add_argument("--config-file", default=os.environ.get("SYSTELCFG"), help="its configuration file (default: $SYSTELCFG)")
    ap.add_argument("--config", default=os.environ.get("USETELCFG"), help="the configuration's name (default: $USETELCFG)")
    ap.add_argument("--case", default="examples/telemac2d/malpasset/t2d_malpasset-char.cas",
                    help="steering file, absolute or relative to the TELEMAC tree")
    ap.add_argument("--ranks", default="1,4", help="rank counts, comma separated (default 1,4)")
    ap.add_argument("--time-steps", type=int, help="NUMBER OF TIME STEPS for a shorter run")
    ap.add_argument("--prefix", help="anabranch installation (default: above the `anabranch` found on PATH)")
    ap.add_argument("--integration", help="the user Fortran file (default: the installation's, else this tree's)")
    ap.add_argument("--python", default=sys.executable, help="Python for TELEMAC's runner (numpy<2, scipy, matplotlib)")
    ap.add_argument("--workdir", default="bench-telemac", help="scratch folder (emptied)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--no-restart", action="store_true",
                    help="skip the continued runs (each parallel run continued from its result, both routes)")
    args = ap.parse_args()

    if not args.telemac_root:
        print("bench/telemac.py: skipped: TELEMAC not given (set TELEMAC_ROOT to a built TELEMAC tree, "
              "SYSTELCFG and USETELCFG to its configuration; see docs/telemac.md)")
        return 0
    root = pathlib.Path(args.telemac_root).resolve()
    if not (root / "scripts/python3/telemac2d.py").exists():
        fail(f"{root} is not a TELEMAC tree (no scripts/python3/telemac2d.py)")
    if not args.config_file or not args.config:
        fail("TELEMAC's configuration is not given (SYSTELCFG and USETELCFG, or --config-file and --config)")
    exe = shutil.which("anabranch")
    prefix = pathlib.Path(args.prefix).resolve() if args.prefix else (pathlib.Path(exe).resolve().parents[1] if exe else None)
    args.prefix = prefix
    if not prefix or not list((prefix / "lib").glob("libanabranch_c.so*")):
        fail(f"no anabranch installation at {prefix} (cmake --install build --prefix DIR; --prefix DIR)")
    if not args.integration:
        installed = prefix / "share/anabranch/telemac/anabranch_telemac.f"
        args.integration = installed if installed.exists() else HERE.parent / "integrations/telemac/anabranch_telemac.f"
    case = pathlib.Path(args.case)
    case = case if case.is_absolute() else root / case
    if not case.exists():
        fail(f"no steering file {case}")
    ranks = [int(r) for r in args.ranks.split(",")]

    work = pathlib.Path(args.workdir).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cfg_ab = work / "systel.anabranch.cfg"
    derived_config(args.config_file, args.config, prefix, cfg_ab)

    runs = []
    for p in ranks:
        for mode, cfg in (("classic", pathlib.Path(args.config_file).resolve()), ("anabranch", cfg_ab)):
            print(f"-- {case.name}: {mode} on {p} rank{'s' if p > 1 else ''}", flush=True)
            r = run_case(args, root, cfg, case, p, mode, work)
            r.update(mode=mode, ranks=p)
            runs.append(r)

    # Continued runs: from the result of each parallel run, the classic way (TELEMAC's partel
    # splits the previous computation, gretel merges) and through anabranch (every rank reads
    # its nodes of the one file; parts with header and mesh only).
    if not args.no_restart:
        for p in [p for p in ranks if p > 1]:
            for mode, cfg in (("classic", pathlib.Path(args.config_file).resolve()), ("anabranch", cfg_ab)):
                first = next(r for r in runs if r["mode"] == mode and r["ranks"] == p and not r.get("continued"))
                print(f"-- {case.name}: {mode} on {p} ranks, continued from its result", flush=True)
                r = run_case(args, root, cfg, case, p, mode, work, previous=first["results"][0])
                r.update(mode=mode, ranks=p, continued=True)
                runs.append(r)

    failures = []
    by = {(r["mode"], r["ranks"], bool(r.get("continued"))): r for r in runs}
    for (mode, p, continued), a in by.items():
        if mode != "anabranch":
            continue
        c = by[("classic", p, continued)]
        same = all(pathlib.Path(x).read_bytes() == pathlib.Path(y).read_bytes() for x, y in zip(a["results"], c["results"]))
        a["identical_to_classic"] = same
        if p > 1 and not same:
            where = subprocess.run([prefix / "bin/anabranch", "diff", a["results"][0], c["results"][0]], capture_output=True, text=True)
            failures.append(f"{p} ranks{', continued' if continued else ''}: the anabranch result differs from the classic "
                            "merged result: " + (where.stdout.strip().splitlines() or [where.stderr.strip()])[-1])
    if 1 in ranks:
        for p in ranks:
            if p == 1:
                continue
            diffs, status = compare_last_frames(prefix / "bin/anabranch", by[("classic", 1, False)]["results"][0],
                                                by[("anabranch", p, False)]["results"][0], DEFAULT_EPS)
            by[("anabranch", p, False)]["serial_last_frame_max_abs_diff"] = diffs
            if args.time_steps is None and status != 0:
                failures.append(f"{p} ranks: the last frame differs from the serial run's beyond TELEMAC's tolerances ("
                                + ", ".join(f"{n} {d:.3g}" for n, d in diffs.items()) + ")")

    print("\nseconds of each stage of TELEMAC's runner (each includes ~3 s of the runner's own start); gretel: the merge "
          "alone; output: writing inside the run (anabranch)")
    print(f"{'ranks':>5} {'mode':<20} {'split':>7} {'compile':>8} {'run':>7} {'gretel':>7} {'merge':>7} {'output':>7} {'frames':>6}  result")
    for r in runs:
        s = r["seconds"]
        label = r["mode"] + (", continued" if r.get("continued") else "")
        print(f"{r['ranks']:>5} {label:<20} {s['split']:7.2f} {s['compile']:8.2f} {s['run']:7.2f} {s.get('gretel', 0):7.3f} {s['merge']:7.2f} "
              f"{r['output_seconds'] if r['output_seconds'] is not None else float('nan'):7.3f} {r['frames']:>6}  "
              + ("= classic, byte for byte" if r["mode"] == "anabranch" and r["ranks"] > 1 and r["identical_to_classic"] else ""))
    for r in runs:
        if "serial_last_frame_max_abs_diff" in r:
            print(f"last frame, {r['ranks']} ranks against 1: " +
                  ", ".join(f"{k} {v:.3g}" for k, v in r["serial_last_frame_max_abs_diff"].items()))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"case": str(case), "time_steps": args.time_steps, "runs": runs}, indent=1))
    for f in failures:
        print(f"bench/telemac.py: FAILED: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
