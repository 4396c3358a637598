#!/usr/bin/env python3
"""anabranch-cfl3d: NASA CFL3D linked with anabranch's restart and PLOT3D routines.

    anabranch-cfl3d build CFL3D_DIR [-o DIR] [--only mpi|seq] [--fc MPIF90] [--dry-run]
    anabranch-cfl3d check EXECUTABLE
    anabranch-cfl3d cgns-dir DIR
    anabranch-cfl3d restart-deck DECK [-o OUT] [--cycles N]
    anabranch-cfl3d periodic-self DECK [-o OUT]

build   compiles share/anabranch/cfl3d/anabranch_cfl3d.F and CFL3D's own wrest.F and rrest.F
        (under other names) with the flags of CFL3D's build (its build/makefile, made by its
        Install script), and links cfl3d_mpi and cfl3d_seq into DIR (default: the current
        folder) from the objects of CFL3D's build (build/cfl/mpi, build/cfl/seq, build/cfl/libs)
        without CFL3D's wrest.o, rrest.o and plot3d.o (plot3d.o goes in with its routine
        renamed), and with libanabranch_c. A CFL3D built with CGNS (-DCGNS in its flags) gets
        its cgnstools.o twice (the host's and the owners' copies, symbols renamed with objcopy)
        and anabranch_cfl3d_cgns.c, compiled with --cc against its CGNS headers, so that the
        owners write a CGNS dump's arrays. CFL3D's build tree is read, never changed: build
        CFL3D first (make cfl3d_mpi, make cfl3d_seq in its build/). Each command is printed.
check   says whether an executable was linked by `build` (CFL3D's own routines renamed in it,
        libanabranch_c found by the loader): status 0 when it was, 1 otherwise. It warns of a
        CFL3D built with -DNOREDIRECT, which reads ./cfl3d.inp and ignores standard input.
cgns-dir
        a folder to give CFL3D's Install as -cgnsdir= for a build with Debian's CGNS
        (libcgns-dev), which lacks what CFL3D's CGNS routines were written against: the Fortran
        header cgnslib_f.h (here: `use cgns`, CGNS's own module, with cgns.mod beside it), the
        module's object in the shared library, and cg_close_f_ and cg_error_print_f_ (the
        names CFL3D's main.F, mgblk.F and setup.F call without the header). DIR/lib/libcgns.so
        is a linker script naming Debian's libcgns.so and DIR/lib/libcgnsfix.a (the module's
        object out of libcgns.a, and those two names calling CGNS's).
restart-deck
        the deck of a restart from the run's restart file: irest 1, one mesh level (mseq 1,
        the finest level's ncyc and mit lines kept), --cycles the finest level's cycles.
        Written to OUT, or to standard output.
periodic-self
        a deck written by CFL3D's splitter for a grid periodic with itself (bctype 2005,
        partner nblp its own grid), split across the other directions: each piece's periodic
        segments made periodic with the piece itself (the splitter leaves the unsplit grid's
        number there, which CFL3D then refuses or runs wrong).

Errors name the file and end with status 1 (2 for a bad command line).
"""
import argparse
import os
import pathlib
import shlex
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
# Installed: PREFIX/bin/anabranch-cfl3d beside PREFIX/share/anabranch/cfl3d/anabranch_cfl3d.F.
# In the source tree: integrations/cfl3d/.
SOURCE_CANDIDATES = [HERE.parent / "share" / "anabranch" / "cfl3d" / "anabranch_cfl3d.F", HERE / "anabranch_cfl3d.F"]
# What the replacement takes over: CFL3D's objects left out of the link.
REPLACED = ("wrest.o", "rrest.o", "plot3d.o")
# A build with CGNS (-DCGNS): CFL3D's CGNS routines (libs/cgnstools.o) go in twice. The host's
# copy has the two calls that write a block's values renamed to anabranch_cfl3d_cgns.c's (they
# make the arrays' nodes and leave the values to the owners) and its file opening watched;
# the owners' copy has every routine renamed abc_o_* and the CGNS calls of writebcs,
# writesoln and writeturb renamed to functions that keep the values instead of writing them.
CGNS_TOOLS = "cgnstools.o"
CGNS_HOST_SYMS = {"cg_field_write_f_": "abc_h_field_write_f_", "cg_array_write_f_": "abc_h_array_write_f_",
                  "cg_open_f_": "abc_h_open_f_"}
CGNS_OWNER_SYMS = {"__cgns_MOD_cg_goto_f": "abc_o_cg_goto_f", "cg_sol_write_f_": "abc_o_cg_sol_write_f_",
                   "cg_descriptor_write_f_": "abc_o_cg_descriptor_write_f_", "cg_rind_write_f": "abc_o_cg_rind_write_f",
                   "cg_field_write_f_": "abc_o_cg_field_write_f_", "cg_user_data_write_f_": "abc_o_cg_user_data_write_f_",
                   "cg_nuser_data_f": "abc_o_cg_nuser_data_f", "cg_user_data_read_f_": "abc_o_cg_user_data_read_f_",
                   "cg_array_write_f_": "abc_o_cg_array_write_f_", "cg_error_exit_f": "abc_o_cg_error_exit_f"}
# CFL3D's build/makefile variables the builds use (its Zmpi and Zseq rules).
MAKE_VARS = ("FTN", "FFLAG", "PREC", "INLINE", "CPPOPT", "CPPOPT_SP", "LFLAG", "LLIBS", "LLIBS_SEQ", "CFLSRC_D")


class Error(Exception):
    pass


def say(cmd):
    print("+ " + " ".join(shlex.quote(str(c)) for c in cmd), flush=True)


def run(cmd, dry, cwd=None):
    say(cmd)
    if dry:
        return
    r = subprocess.run([str(c) for c in cmd], cwd=cwd)
    if r.returncode != 0:
        raise Error(f"{cmd[0]} failed (status {r.returncode})")


# --- CFL3D's build tree ---------------------------------------------------------------------

def makefile_vars(build):
    """The variables of CFL3D's build/makefile, as make expands them."""
    mk = build / "makefile"
    if not mk.is_file():
        raise Error(f"{mk}: no such file (run CFL3D's build/Install, then make cfl3d_mpi and make cfl3d_seq)")
    make = shutil.which("make")
    if not make:
        raise Error("make is not on PATH")
    printer = "_anabranch_vars:\n" + "".join(f"\t@printf '%s\\n' '$({v})'\n" for v in MAKE_VARS)
    r = subprocess.run([make, "-s", "--no-print-directory", "-C", str(build), "-f", "makefile", "-f", "-",
                        "_anabranch_vars"], input=printer, capture_output=True, text=True)
    if r.returncode != 0:
        raise Error(f"{mk}: make could not read it: {r.stderr.strip()}")
    values = r.stdout.split("\n")
    return {v: values[i].strip() if i < len(values) else "" for i, v in enumerate(MAKE_VARS)}


def find_lib(prefix):
    for d in sorted(prefix.glob("lib*")) + sorted(prefix.glob("lib*/*")):
        if (d / "libanabranch_c.so").exists() or (d / "libanabranch_c.a").exists():
            return d
    raise Error(f"{prefix}: no libanabranch_c under lib*/ (is anabranch installed there?)")


def objects(build, flavour):
    """CFL3D's objects of one build, by name: its own folder's, then build/cfl/libs's (which
    CFL3D's link puts in through links), without the routines the replacement takes over."""
    objs = {}
    for d in (build / "cfl" / flavour, build / "cfl" / "libs"):
        for o in sorted(d.glob("*.o")):
            if o.name not in objs and o.exists():
                objs[o.name] = o.resolve()
    for name in REPLACED:
        objs.pop(name, None)
    return objs


def without_module_dir(flags):
    """flags without gfortran's module folder (-J DIR or -JDIR)."""
    out, skip = [], False
    for f in flags:
        if skip:
            skip = False
        elif f == "-J":
            skip = True
        elif not str(f).startswith("-J"):
            out.append(f)
    return out


def build_one(a, v, cfl3d, flavour, fc, source, libdir, out):
    build = cfl3d / "build"
    own = build / "cfl" / flavour
    if not (own / "main.o").exists():
        raise Error(f"{own}: no main.o (build CFL3D's cfl3d_{flavour} first: make cfl3d_{flavour} in {build})")
    plot3d = own / "plot3d.o"
    for f in (plot3d,):
        if not f.exists():
            raise Error(f"{f}: no such file (CFL3D's cfl3d_{flavour} build is incomplete)")
    srcdir = (build / v["CFLSRC_D"]).resolve() if v["CFLSRC_D"] else cfl3d / "source" / "cfl3d" / "dist"
    if not (srcdir / "wrest.F").exists():
        srcdir = cfl3d / "source" / "cfl3d" / "dist"
    for name in ("wrest.F", "rrest.F"):
        if not (srcdir / name).exists():
            raise Error(f"{srcdir / name}: no such file (CFL3D's source tree)")
    # CFL3D's compile line of this build (its top makefile's Zmpi and Zseq rules)
    cpp = shlex.split(v["CPPOPT"]) + shlex.split(v["CPPOPT_SP"]) if flavour == "mpi" else shlex.split(v["CPPOPT_SP"])
    if flavour == "seq":
        cpp = [f for f in cpp if f != "-DDIST_MPI"]
    fflag = shlex.split(v["FFLAG"]) + shlex.split(v["PREC"]) + shlex.split(v["INLINE"])
    inc = ["-I", own, "-I", build / "cfl" / "libs"]
    work = out / f"anabranch-cfl3d-{flavour}"
    if not a.dry_run:
        work.mkdir(parents=True, exist_ok=True)
    compile_ = [fc, *cpp, *fflag, *inc, "-w"]
    mine = []
    # CFL3D's own routines under other names: the replacement hands them what it leaves
    for routine in ("wrest", "rrest"):
        o = work / f"{routine}_cfl3d.o"
        run([*compile_, f"-D{routine}={routine}_cfl3d", "-ffixed-line-length-none", "-c", srcdir / f"{routine}.F",
             "-o", o], a.dry_run)
        mine.append(o)
    # plot3d.F holds a Hollerith format a -D rename would change: its object is renamed instead
    o = work / "plot3d_cfl3d.o"
    objcopy = shutil.which("objcopy")
    if not objcopy:
        raise Error("objcopy is not on PATH (binutils)")
    run([objcopy, "--redefine-sym", "plot3d_=plot3d_cfl3d_", plot3d, o], a.dry_run)
    mine.append(o)
    # the replacement's module goes to our folder, not CFL3D's (its FFLAG may name one: -J)
    o = work / "anabranch_cfl3d.o"
    run([*without_module_dir(compile_), "-ffixed-form", f"-J{work}", "-c", source, "-o", o], a.dry_run)
    mine.append(o)
    objs = objects(build, flavour)
    if "-DCGNS" in cpp:
        mine += cgns_objects(a, objs, cpp, source, work, objcopy)
    exe = out / f"cfl3d_{flavour}"
    libs = shlex.split(v["LLIBS"] if flavour == "mpi" else v["LLIBS_SEQ"])
    run([fc, *cpp, *shlex.split(v["LFLAG"]), "-o", exe, *objs.values(), *mine, *libs,
         f"-L{libdir}", "-lanabranch_c", f"-Wl,-rpath,{libdir}"], a.dry_run)
    return exe


def cgns_objects(a, objs, cpp, source, work, objcopy):
    """A build with CGNS: the host's and the owners' copies of CFL3D's cgnstools.o (taken out
    of objs) and anabranch_cfl3d_cgns.c compiled against CGNS's headers of CFL3D's build."""
    tools = objs.pop(CGNS_TOOLS, None)
    if tools is None:
        raise Error(f"CFL3D's build defines CGNS but has no {CGNS_TOOLS} in build/cfl/libs")
    csource = source.parent / "anabranch_cfl3d_cgns.c"
    if not csource.exists():
        raise Error(f"{csource}: no such file (anabranch's CGNS routines for CFL3D)")
    host = work / "cgnstools_host.o"
    run([objcopy, *[x for k, v in CGNS_HOST_SYMS.items() for x in ("--redefine-sym", f"{k}={v}")], tools, host], a.dry_run)
    owner = work / "cgnstools_owner.o"
    renames = dict(CGNS_OWNER_SYMS)
    if not a.dry_run:
        nm = shutil.which("nm")
        if not nm:
            raise Error("nm is not on PATH (binutils)")
        r = subprocess.run([nm, "--defined-only", "-g", str(tools)], capture_output=True, text=True)
        if r.returncode != 0:
            raise Error(f"{tools}: nm cannot read it: {r.stderr.strip()}")
        for line in r.stdout.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] == "T":
                renames[f[2]] = "abc_o_" + f[2]
    run([objcopy, *[x for k, v in renames.items() for x in ("--redefine-sym", f"{k}={v}")], tools, owner], a.dry_run)
    cc = a.cc or shutil.which("cc") or "cc"
    o = work / "anabranch_cfl3d_cgns.o"
    run([cc, "-O2", *[f for f in cpp if f.startswith("-I")], "-c", csource, "-o", o], a.dry_run)
    return [host, owner, o]


def cmd_build(a):
    cfl3d = pathlib.Path(a.cfl3d).resolve()
    if not (cfl3d / "build").is_dir():
        raise Error(f"{cfl3d}: no build/ folder (give CFL3D's top folder, the one holding source/ and build/)")
    source = pathlib.Path(a.source).resolve() if a.source else next((s for s in SOURCE_CANDIDATES if s.exists()), None)
    if source is None or not source.exists():
        raise Error(f"{source or SOURCE_CANDIDATES[0]}: no such file (anabranch's CFL3D routines)")
    prefix = pathlib.Path(a.prefix).resolve() if a.prefix else HERE.parent
    libdir = pathlib.Path(a.libdir).resolve() if a.libdir else find_lib(prefix)
    v = makefile_vars(cfl3d / "build")
    out = pathlib.Path(a.out).resolve()
    flavours = [a.only] if a.only else [f for f in ("mpi", "seq") if (cfl3d / "build" / "cfl" / f / "main.o").exists()]
    if not flavours:
        raise Error(f"{cfl3d / 'build' / 'cfl'}: neither mpi/main.o nor seq/main.o (make cfl3d_mpi or make cfl3d_seq "
                    "in CFL3D's build/ first)")
    if "-DNOREDIRECT" in shlex.split(v["CPPOPT_SP"]) + shlex.split(v["CPPOPT"]):
        print(f"anabranch-cfl3d: warning: {cfl3d / 'build' / 'makefile'}: {NOREDIRECT_WARNING}", file=sys.stderr)
    for flavour in flavours:
        # anabranch needs MPI in both builds: CFL3D's compiler when it is an MPI wrapper
        fc = a.fc or (v["FTN"] if os.path.basename(v["FTN"].split()[0] if v["FTN"] else "").startswith("mpi")
                      else "mpif90")
        exe = build_one(a, v, cfl3d, flavour, fc, source, libdir, out)
        print(f"anabranch-cfl3d: {exe}" + (" (not built: --dry-run)" if a.dry_run else ""), flush=True)
    return 0


# -DNOREDIRECT in CFL3D's flags: its main.F opens ./cfl3d.inp instead of copying standard input
# to this file; the file name is in every other build's executable.
NOREDIRECT_WARNING = ("CFL3D is built with -DNOREDIRECT: it reads its deck from ./cfl3d.inp and ignores standard "
                      "input, so `cfl3d_mpi < restart.inp` runs cfl3d.inp again; build CFL3D without it (its "
                      "makefile's CPPOPT_SP), or copy each deck to cfl3d.inp")


# --- check ----------------------------------------------------------------------------------

def cmd_check(a):
    exe = pathlib.Path(a.executable)
    if not exe.is_file():
        raise Error(f"{exe}: no such file")
    nm = shutil.which("nm")
    if not nm:
        raise Error("nm is not on PATH (binutils)")
    syms = subprocess.run([nm, str(exe)], capture_output=True, text=True)
    if syms.returncode != 0:
        raise Error(f"{exe}: nm cannot read it: {syms.stderr.strip()}")
    names = {line.split()[-1] for line in syms.stdout.splitlines() if line.split()}
    if not {"wrest_cfl3d_", "rrest_cfl3d_", "plot3d_cfl3d_"} <= names:
        print(f"{exe}: CFL3D's own restart and PLOT3D routines (not linked by anabranch-cfl3d build)")
        return 1
    ldd = subprocess.run(["ldd", str(exe)], capture_output=True, text=True)
    lib = next((line.split("=>")[1].split()[0] for line in ldd.stdout.splitlines()
                if "libanabranch_c" in line and "=>" in line), None)
    if not lib or lib == "not":
        print(f"{exe}: linked with anabranch's routines, but the loader does not find libanabranch_c")
        return 1
    print(f"{exe}: restart and PLOT3D files through anabranch ({lib})")
    if b"tempz3y2x1.inp" not in exe.read_bytes():
        print(f"anabranch-cfl3d: warning: {exe}: {NOREDIRECT_WARNING}", file=sys.stderr)
    return 0


# --- CGNS -------------------------------------------------------------------------------------

SHIM = """/* CFL3D's main.F, mgblk.F and setup.F call cg_close_f and cg_error_print_f without
   cgnslib_f.h: gfortran calls cg_close_f_ and cg_error_print_f_, which CGNS 3.4 defines
   under its own (BIND(C)) names only. */
void cg_close_f(int *fn, int *ier);
void cg_error_print_f(void);
void cg_close_f_(int *fn, int *ier) { cg_close_f(fn, ier); }
void cg_error_print_f_(void) { cg_error_print_f(); }
"""


def cmd_cgns_dir(a):
    out = pathlib.Path(a.dir).resolve()
    libdir = next((d for d in (pathlib.Path(p) for p in a.cgns_libdir) if (d / "libcgns.so").exists()), None)
    if libdir is None:
        raise Error(f"no libcgns.so in {', '.join(a.cgns_libdir)} (Debian: apt install libcgns-dev; --cgns-libdir)")
    mod = pathlib.Path(a.cgns_include) / "cgns.mod"
    if not mod.exists():
        raise Error(f"{mod}: no such file (CGNS's Fortran module; --cgns-include)")
    (out / "lib").mkdir(parents=True, exist_ok=True)
    (out / "cgnslib_f.h").write_text("      use cgns\n")
    link = out / "cgns.mod"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(mod)
    work = out / "lib" / "shim"
    work.mkdir(exist_ok=True)
    (work / "cgns_f_shim.c").write_text(SHIM)
    cc = a.cc or shutil.which("cc") or "cc"
    run([cc, "-O2", "-fPIC", "-c", work / "cgns_f_shim.c", "-o", work / "cgns_f_shim.o"], False)
    members = [work / "cgns_f_shim.o"]
    static = libdir / "libcgns.a"
    if static.exists():
        listed = subprocess.run(["ar", "t", str(static)], capture_output=True, text=True).stdout.split()
        module = next((m for m in listed if m.startswith("cgns_f.")), None)
        if module:
            run(["ar", "x", static, module], False, cwd=work)
            members.append(work / module)
    fix = out / "lib" / "libcgnsfix.a"
    if fix.exists():
        fix.unlink()
    run(["ar", "rcs", fix, *members], False)
    (out / "lib" / "libcgns.so").write_text(f"/* anabranch-cfl3d cgns-dir: CGNS with what CFL3D needs of it */\n"
                                           f"INPUT({(libdir / 'libcgns.so').resolve()} {fix})\n")
    print(f"anabranch-cfl3d: {out}: give CFL3D's Install -cgnsdir={out}")
    return 0


# --- the input deck -------------------------------------------------------------------------

def header_index(lines, *words, path="deck"):
    """The line whose words include all of words (CFL3D's column headers, any case)."""
    want = [w.lower() for w in words]
    for i, line in enumerate(lines):
        t = line.lower().split()
        if all(w in t for w in want):
            return i
    raise Error(f"{path}: no line with {' '.join(words)}")


def set_field(lines, words, field, value, path="deck"):
    i = header_index(lines, *words, path=path)
    v = lines[i + 1].split()
    v[field] = str(value)
    lines[i + 1] = "".join(f"{x:>10}" for x in v)


def get_field(lines, words, field, path="deck"):
    return lines[header_index(lines, *words, path=path) + 1].split()[field]


def one_level(lines, ncyc, path="deck"):
    """mseq 1: keep the finest level's ncyc line (its ncyc replaced when given) and mit line."""
    mseq = int(get_field(lines, ("mseq", "mgflag"), 0, path=path))
    set_field(lines, ("mseq", "mgflag"), 0, 1, path=path)
    i = header_index(lines, "ncyc", "mglevg", path=path)
    del lines[i + 1:i + mseq]
    if ncyc is not None:
        v = lines[i + 1].split()
        v[0] = str(ncyc)
        lines[i + 1] = "".join(f"{x:>10}" for x in v)
    j = header_index(lines, "mit1", path=path)
    del lines[j + 1:j + mseq]


def finest_ncyc(lines, path="deck"):
    mseq = int(get_field(lines, ("mseq", "mgflag"), 0, path=path))
    return int(lines[header_index(lines, "ncyc", "mglevg", path=path) + mseq].split()[0])


def restart_deck(lines, cycles=None, path="deck"):
    """The deck of a restart: irest 1, one mesh level, the finest level's cycles."""
    set_field(lines, ("dt", "irest"), 1, 1, path=path)
    one_level(lines, cycles, path=path)
    return lines


def periodic_self(lines, path="deck"):
    """Every periodic boundary segment (bctype 2005) made periodic with its own grid: its
    `nblp` (the partner grid, the first value after the segment's line) set to the segment's
    grid. CFL3D's splitter copies the unsplit grid's partner (grid 1) to every piece of a grid
    periodic with itself, which CFL3D refuses or runs wrong; right when the splits cut across
    the periodic direction only. Returns how many segments changed."""
    faces = ("i0:", "idim:", "j0:", "jdim:", "k0:", "kdim:")
    changed, in_bcs = 0, False
    for i, line in enumerate(lines):
        t = line.split()
        if t and t[0].lower() in faces:
            in_bcs = True
            continue
        if t and t[0].lower() == "mseq":
            in_bcs = False
        if not (in_bcs and len(t) == 8 and all(x.lstrip("-").isdigit() for x in t) and int(t[2]) == 2005):
            continue
        if i + 2 >= len(lines) or "nblp" not in lines[i + 1].lower():
            raise Error(f"{path}: line {i + 2}: a periodic segment (bctype 2005) without its nblp line")
        v = lines[i + 2].split()
        if not v:
            raise Error(f"{path}: line {i + 3}: the periodic segment's nblp line has no values")
        grid = int(t[0])
        if float(v[0]) != grid:
            v[0] = f"{grid:.5f}"
            lines[i + 2] = "".join(f"{x:>10}" for x in v)
            changed += 1
    return changed


def write_out(text, out, src):
    """text to the file out (under a temporary name renamed when whole), or standard output."""
    if not out:
        sys.stdout.write(text)
        return
    out = pathlib.Path(out)
    if out.exists() and out.resolve() == pathlib.Path(src).resolve():
        raise Error(f"{out}: the output is the input deck")
    tmp = out.with_name(out.name + ".part")
    tmp.write_text(text)
    tmp.replace(out)


def read_deck(path):
    try:
        return pathlib.Path(path).read_text().split("\n")
    except OSError as e:
        raise Error(f"{path}: {e.strerror}") from None


def cmd_periodic_self(a):
    lines = read_deck(a.deck)
    n = periodic_self(lines, path=a.deck)
    write_out("\n".join(lines), a.out, a.deck)
    print(f"anabranch-cfl3d: {n} periodic segment(s) made periodic with their own grid", file=sys.stderr)
    return 0


def cmd_restart_deck(a):
    lines = read_deck(a.deck)
    try:
        restart_deck(lines, a.cycles, path=str(a.deck))
    except (IndexError, ValueError):
        raise Error(f"{a.deck}: not a CFL3D deck (a header line without its values)") from None
    write_out("\n".join(lines), a.out, a.deck)
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="anabranch-cfl3d", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="See docs/cfl3d.md (anabranch's documentation, 'NASA CFL3D').")
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="link cfl3d_mpi and cfl3d_seq with anabranch from a CFL3D build tree")
    b.add_argument("cfl3d", metavar="CFL3D_DIR", help="CFL3D's top folder (source/ and build/, built)")
    b.add_argument("-o", "--out", default=".", help="where cfl3d_mpi and cfl3d_seq go (default: here)")
    b.add_argument("--only", choices=("mpi", "seq"), help="one build only (default: those CFL3D built)")
    b.add_argument("--fc", help="the MPI Fortran compiler (default: CFL3D's FTN when an MPI wrapper, else mpif90)")
    b.add_argument("--cc", help="the C compiler of a build with CGNS (default: cc)")
    b.add_argument("--source", help="anabranch_cfl3d.F (default: the installed one)")
    b.add_argument("--prefix", help="anabranch's install prefix (default: this script's)")
    b.add_argument("--libdir", help="the folder of libanabranch_c (default: found under the prefix)")
    b.add_argument("-n", "--dry-run", action="store_true", help="print the commands only")
    c = sub.add_parser("check", help="whether an executable was linked with anabranch's routines")
    c.add_argument("executable")
    g = sub.add_parser("cgns-dir", help="a -cgnsdir= folder for CFL3D's Install over Debian's CGNS")
    g.add_argument("dir", metavar="DIR")
    g.add_argument("--cgns-libdir", action="append", default=None,
                   help="where libcgns.so and libcgns.a are (default: /usr/lib/x86_64-linux-gnu, /usr/lib, /usr/local/lib)")
    g.add_argument("--cgns-include", default="/usr/include", help="where cgns.mod is (default: /usr/include)")
    g.add_argument("--cc", help="the C compiler (default: cc)")
    r = sub.add_parser("restart-deck", help="a deck that restarts from the run's restart file")
    r.add_argument("deck")
    r.add_argument("-o", "--out", help="the new deck (default: standard output)")
    r.add_argument("--cycles", type=int, help="cycles on the finest level (default: the deck's)")
    f = sub.add_parser("periodic-self", help="a split deck's periodic segments made periodic with their own grid")
    f.add_argument("deck")
    f.add_argument("-o", "--out", help="the new deck (default: standard output)")
    a = p.parse_args(argv)
    try:
        if a.cmd == "cgns-dir" and not a.cgns_libdir:
            a.cgns_libdir = ["/usr/lib/x86_64-linux-gnu", "/usr/lib", "/usr/local/lib"]
        return {"build": cmd_build, "check": cmd_check, "cgns-dir": cmd_cgns_dir, "restart-deck": cmd_restart_deck,
                "periodic-self": cmd_periodic_self}[a.cmd](a)
    except Error as e:
        print(f"anabranch-cfl3d: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
