#!/usr/bin/env python3
"""Builds the documentation site and runs every example in it.

    python3 scripts/docs.py [--build BUILD] [--out DIR] [--site-only | --run-only] [PAGE...]

1. Stages docs/ into DIR/src: README.md becomes the landing page (index.md), CHANGELOG.md
   the changelog; a line `--8<-- "path"` is replaced by that file of the source tree; a
   command page's `<!-- options -->` by the command's `--help`; the API reference pages
   are generated from include/anabranch/anabranch.h, the Fortran module and the Python
   package's docstrings.
2. Builds the site with MkDocs (`mkdocs build --strict`: a warning is an error) into
   DIR/site. Every command has its page in the navigation, every public name of the API
   its entry, or the build fails.
3. Runs the examples: every ```sh and ```python block of every page, in order, in a scratch
   directory per page (DIR/run/PAGE, where `examples/` is the source tree's), against the
   build installed into DIR/prefix (its bin/ on PATH, then the example solvers of
   BUILD/examples, lib/pkgconfig on PKG_CONFIG_PATH, the Python package importable,
   `python3` the build's Python). A block right after a
   line `<!-- not run: REASON -->` is shown only (installing packages, a TELEMAC install).
   A block that is a whole file of the source tree (`--8<--`) is shown only: the blocks
   that build and run it run it. A block right after `<!-- file: NAME -->` (a program in
   another language) is saved as NAME in the page's directory, for the blocks after it to
   build and run. A block fails when it exits non-zero; every failure is
   reported with its page and line. docs/cfl3d.md's blocks run with CFL3D, CFL3D_CASE and CFL3D_CASE9
   naming the stand-in CFL3D tree the build makes (BUILD/tests/cfl3d_tree), unless CFL3D is
   set; without either they are shown only.

BUILD defaults to build/ (configured with a Python that has nanobind, as
scripts/setup.sh --test makes it); DIR to BUILD/docs. Exit 0 when the site builds and every
example runs, 1 otherwise.
"""
import argparse
import inspect
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import textwrap

SRC = pathlib.Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
INCLUDE = re.compile(r'^--8<-- "([^"]+)"\s*$')
NOT_RUN = re.compile(r"^\s*<!-- not run: .+-->\s*$")
AS_FILE = re.compile(r"^\s*<!-- file: ([A-Za-z0-9_.-]+) -->\s*$")
RUNNABLE = {"sh": "sh", "bash": "sh", "python": "python"}


def fail(msg):
    print(f"docs: {msg}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------------------------------
# Staging


def landing_page(readme):
    """README.md as the site's index: links into docs/ become site links."""
    text = readme.replace("](docs/", "](").replace("](CHANGELOG.md)", "](changelog.md)")
    for link in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
        if not (SRC / "docs" / link).exists() and link != "changelog.md":
            fail(f"README.md links to {link}, which is not a page of the site (link into docs/)")
    return text


def expand_includes(text, page):
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = INCLUDE.match(line)
        if m:
            path = SRC / m.group(1)
            if not path.is_file():
                fail(f"{page}:{n}: includes {m.group(1)}, which is not a file of the source tree")
            if out and FENCE.match(out[-1]):  # a whole file shown: the examples that use it run it
                out.insert(len(out) - 1, f"<!-- not run: {m.group(1)}, which the examples run -->")
            out.extend(path.read_text().rstrip("\n").splitlines())
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def commands(exe):
    """The subcommands `anabranch --help` lists, in its order."""
    text = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
    listed = text.split("Subcommands:", 1)[1]
    return [m.group(1) for m in re.finditer(r"^  ([a-z][a-z0-9-]*) ", listed, re.M)]


def command_help(exe, name):
    r = subprocess.run([exe, name, "--help"], capture_output=True, text=True, env=dict(os.environ, COLUMNS="100"))
    if r.returncode != 0:
        fail(f"`anabranch {name} --help` exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout.rstrip()


def comment_markdown(lines):
    """A header comment as Markdown: `- ` or two spaces start a list item, three or more continue it."""
    out, in_list = [], False
    for line in "\n".join(lines).splitlines():
        item = re.match(r"^(?: ?- |  )(\S.*)$", line)
        if item:
            if not in_list:
                out.append("")
            out.append("- " + item.group(1))
            in_list = True
        elif in_list and line.startswith("   "):
            out.append("  " + line.strip())
        else:
            if in_list and line.strip():
                out.append("")
            in_list = False
            out.append(line)
    return "\n".join(out)


def c_reference(header):
    """include/anabranch/anabranch.h as Markdown: its sections, each function's prototype and comment."""
    lines = header.read_text().splitlines()
    out = ["# C API reference", "",
           "Generated from `include/anabranch/anabranch.h` (installed as `<anabranch/anabranch.h>`; link "
           "`anabranch::c` with CMake, or `pkg-config --cflags --libs anabranch`).", ""]
    names = []
    i, comment = 0, []
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s.startswith("/*"):
            block = [line]
            while "*/" not in lines[i]:
                i += 1
                block.append(lines[i])
            i += 1
            body = []
            for b in block:
                b = re.sub(r"^\s*/\*+\s?|\s*\*+/\s*$|^\s*\*\s?", "", b).rstrip()
                body.append(b)
            body = [b for b in body if not re.fullmatch(r"-{10,}", b.strip())]
            while body and not body[0].strip():
                body.pop(0)
            if block[0].strip().startswith("/* ---"):
                title = body[0].rstrip(".:") if body else "Section"
                title = re.split(r"[.:]\s", title, maxsplit=1)[0]
                out += ["", f"## {title}", "", comment_markdown(body), ""]
                comment = []
            elif not names and "Conventions" in body:  # the file's own comment
                out += ["## Conventions", "", comment_markdown(body[body.index("Conventions") + 1:]), ""]
            else:
                comment = body
            continue
        if re.match(r"^(typedef|enum|int|const char\*|void)\b", s):
            decl = [line]
            depth = line.count("{") - line.count("}")
            while not (decl[-1].rstrip().endswith(";") and depth <= 0):
                i += 1
                decl.append(lines[i])
                depth += lines[i].count("{") - lines[i].count("}")
            i += 1
            # Declarations that follow at once (an _f twin, a _float twin) share the comment.
            while i < len(lines) and re.match(r"^(int|const char\*|void) ", lines[i]):
                decl.append(lines[i])
                while not decl[-1].rstrip().endswith(";"):
                    i += 1
                    decl.append(lines[i])
                i += 1
            found = re.findall(r"\b(ab_[a-z0-9_]+)\s*\(", "\n".join(decl))
            head = found[0] if found else None
            if s.startswith("typedef struct"):
                out += [f"`{s}`", ""]
            elif head:
                names += found
                out += [f"### {head}", "", "```c", "\n".join(decl), "```", ""]
                if comment:
                    out += [comment_markdown(comment), ""]
            else:
                out += ["```c", "\n".join(decl), "```", ""]
                if comment:
                    out += ["\n".join(comment), ""]
            comment = []
            continue
        i += 1
    return "\n".join(out) + "\n", names


def fortran_reference(module, c_names):
    """The Fortran module: each public name, its specific procedures' dummy arguments and comments."""
    text = module.read_text()
    lines = text.splitlines()
    public = []
    m = re.search(r"(?m)^  public ::(.*?)\n\s*\n", text, re.S)
    for name in re.sub(r"&\s*\n", " ", m.group(1)).replace("\n", " ").split(","):
        public.append(name.strip())
    generics = {g: [p.strip() for p in ps.split(",")]
                for g, ps in re.findall(r"interface (\w+)\n\s*module procedure ([\w, ]+)", text)}
    procs = {}
    for n, line in enumerate(lines):
        pm = re.match(r"^  (?:(?:integer|logical|real)[\w(), ]*\s+)?(subroutine|function) (\w+)\((.*)\)", line)
        if not pm:
            continue
        doc = []
        k = n - 1
        while k >= 0 and lines[k].strip().startswith("!"):
            doc.insert(0, lines[k].strip().lstrip("!").strip())
            k -= 1
        decls = [line.strip()]
        k = n + 1
        while not re.match(r"^\s*end (subroutine|function)", lines[k]):
            s = lines[k].strip()
            if "::" in s and ("intent(" in s or "result" in line and re.search(r"::\s*" + r"\w*", s) and k == n + 1):
                decls.append("  " + s)
            k += 1
        decls.append(f"end {pm.group(1)}")
        procs[pm.group(2)] = (doc, decls)
    out = ["# Fortran module reference", "",
           "Generated from `bindings/fortran/anabranch.f90`: `use anabranch` (installed in "
           "`include/anabranch/fortran`; link `anabranch::fortran` with CMake, or "
           "`pkg-config --cflags --libs anabranch-fortran`). The module wraps the "
           "[C API](c.md) with the same names: handles are derived types, strings are Fortran "
           "strings, arrays are passed without copies, communicators are `INTEGER` or "
           "`type(MPI_Comm)`. Every routine takes a trailing optional `ierr`: without it, an "
           "error prints `ab_last_error()` and stops the program; with it, the status code is "
           "returned (`AB_OK`, `AB_ERR_USAGE`, `AB_ERR_FORMAT`, `AB_ERR_IO`, `AB_ERR_MPI`, "
           "`AB_ERR_MEMORY`, `AB_ERR_INTERNAL`).", ""]
    for name in public:
        specifics = generics.get(name, [name])
        missing = [s for s in specifics if s not in procs]
        if missing:
            fail(f"{module.name}: public {name}: no procedure {', '.join(missing)}")
        out += [f"### {name}", ""]
        if name in c_names:
            out += [f"The Fortran form of [`{name}`](c.md#{name}).", ""]
        for spec in specifics:
            doc, decls = procs[spec]
            if doc:
                out += [" ".join(doc), ""]
            out += ["```fortran", "\n".join(decls), "```", ""]
    return "\n".join(out) + "\n"


PYTHON_REFERENCE = r"""
import inspect, json, sys, types
import anabranch
out = {"all": list(anabranch.__all__), "undeclared": [], "items": []}
for name, obj in vars(anabranch).items():
    if name.startswith("_") or isinstance(obj, types.ModuleType) or name in anabranch.__all__:
        continue
    if getattr(obj, "__module__", "").startswith("anabranch"):
        out["undeclared"].append(name)
def sig(f):
    try:
        return str(inspect.signature(f))
    except (TypeError, ValueError):
        return "(...)"
for name in anabranch.__all__:
    obj = getattr(anabranch, name)
    item = {"name": name, "doc": inspect.getdoc(obj) or "", "members": []}
    if inspect.isclass(obj):
        item["kind"] = "exception" if issubclass(obj, BaseException) else "class"
        item["sig"] = "" if item["kind"] == "exception" else sig(obj)
        if item["kind"] == "class":
            for m, v in vars(obj).items():
                if m.startswith("_") and m not in ("__enter__",):
                    continue
                if m == "__enter__":
                    item["members"].append({"name": "with", "sig": "", "doc": "A context manager: closed at the end of the block."})
                    continue
                if isinstance(v, (staticmethod, classmethod)):
                    v = v.__func__
                if isinstance(v, property):
                    item["members"].append({"name": m, "sig": "", "doc": inspect.getdoc(v) or "", "kind": "property"})
                elif callable(v):
                    item["members"].append({"name": m, "sig": sig(v), "doc": inspect.getdoc(v) or ""})
    else:
        item["kind"] = "function"
        item["sig"] = sig(obj)
    out["items"].append(item)
print(json.dumps(out))
"""


def python_reference(python, pythonpath):
    env = dict(os.environ, PYTHONPATH=pythonpath)
    r = subprocess.run([python, "-c", PYTHON_REFERENCE], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        fail(f"the Python package could not be imported from {pythonpath}: {r.stderr.strip().splitlines()[-1:]}")
    data = json.loads(r.stdout)
    if data["undeclared"]:
        fail(f"anabranch.__all__ lacks {', '.join(data['undeclared'])} (every public name is in the reference)")
    out = ["# Python package reference", "",
           "Generated from the docstrings of the `anabranch` package (`pip install .`, or `build/python` "
           "on `PYTHONPATH` in a build tree). Arrays are numpy arrays; communicators are mpi4py's. "
           "Errors raise subclasses of `anabranch.Error`.", ""]
    for item in data["items"]:
        heading = {"function": f"{item['name']}{item['sig']}", "class": f"class {item['name']}{item['sig']}",
                   "exception": f"exception {item['name']}"}[item["kind"]]
        out += [f"### {item['name']}", "", f"`{heading}`", ""]
        if not item["doc"]:
            fail(f"anabranch.{item['name']} has no docstring")
        out += [item["doc"], ""]
        for m in item["members"]:
            label = f"{m['name']}{m['sig']}" if m.get("kind") != "property" else f"{m['name']} (property)"
            out += [f"- **`{label}`**" + (f": {m['doc']}" if m["doc"] else "")]
        if item["members"]:
            out.append("")
    return "\n".join(out).replace("\n- **", "\n- **") + "\n"


def stage(args, exe, stage_dir):
    if stage_dir.exists():
        shutil.rmtree(stage_dir)
    shutil.copytree(SRC / "docs", stage_dir)
    (stage_dir / "index.md").write_text(landing_page((SRC / "README.md").read_text()))
    (stage_dir / "changelog.md").write_text((SRC / "CHANGELOG.md").read_text())
    cmd_dir = stage_dir / "commands"
    names = commands(exe)
    for name in names:
        page = cmd_dir / f"{name}.md"
        if not page.exists():
            fail(f"the command `{name}` has no page (docs/commands/{name}.md)")
        text = page.read_text()
        if "<!-- options -->" not in text:
            fail(f"docs/commands/{name}.md has no `<!-- options -->` line for the generated options")
        page.write_text(text.replace("<!-- options -->", "```text\n" + command_help(exe, name) + "\n```"))
    for page in cmd_dir.glob("*.md"):
        if page.stem not in names and page.stem != "index":
            fail(f"docs/commands/{page.name} documents no command of `anabranch --help`")
    api = stage_dir / "api"
    api.mkdir(exist_ok=True)
    c_text, c_names = c_reference(SRC / "include/anabranch/anabranch.h")
    (api / "c.md").write_text(c_text)
    (api / "fortran.md").write_text(fortran_reference(SRC / "bindings/fortran/anabranch.f90", set(c_names)))
    (api / "python.md").write_text(python_reference(args.python, str(args.build / "python")))
    for page in stage_dir.rglob("*.md"):
        page.write_text(expand_includes(page.read_text(), page.relative_to(stage_dir)))
    return names


def build_site(stage_dir, out, names):
    config = (SRC / "mkdocs.yml").read_text()
    for page in ["index.md", *(f"commands/{n}.md" for n in names), "api/c.md", "api/fortran.md", "api/python.md"]:
        if f" {page}" not in config:
            fail(f"mkdocs.yml's nav lacks {page}")
    config = re.sub(r"(?m)^docs_dir:.*$", f"docs_dir: {stage_dir}", config)
    config += f"\nsite_dir: {out / 'site'}\n"
    (out / "mkdocs.yml").write_text(config)
    r = subprocess.run(["mkdocs", "build", "--strict", "--clean", "-q", "-f", str(out / "mkdocs.yml")],
                       capture_output=True, text=True)
    print(r.stdout + r.stderr, end="")
    if r.returncode != 0:
        fail("mkdocs build --strict failed (above)")
    print(f"docs: the site is in {out / 'site'} ({sum(1 for _ in (out / 'site').rglob('*.html'))} pages)")


# ---------------------------------------------------------------------------------------
# Running the examples


def blocks(text):
    """(line, language, code, runs) of every fenced block, indented ones (in lists) included."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(2):
            i += 1
            continue
        indent, lang, start = m.group(1), m.group(2), i
        body = []
        i += 1
        while i < len(lines) and lines[i].rstrip() != indent + "```":
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        as_file = AS_FILE.match(lines[k]) if k >= 0 else None
        if as_file:
            runs = "file:" + as_file.group(1)
        else:
            runs = lang in RUNNABLE and not (k >= 0 and NOT_RUN.match(lines[k]))
        yield start + 1, lang, "\n".join(body) + "\n", runs
        i += 1


def run_examples(args, stage_dir, out, only):
    prefix = out / "prefix"
    if prefix.exists():
        shutil.rmtree(prefix)
    subprocess.run(["cmake", "--install", str(args.build), "--prefix", str(prefix)], check=True, stdout=subprocess.DEVNULL)
    tools = out / "tools"
    shutil.rmtree(tools, ignore_errors=True)
    tools.mkdir()
    for name in ("python3", "python"):  # a script, not a link: a virtual environment knows itself by its path
        (tools / name).write_text(f'#!/bin/sh\nexec "{args.python}" "$@"\n')
        (tools / name).chmod(0o755)
    libdir = next(p.parent for p in prefix.rglob("anabranch.pc"))
    env = dict(os.environ,
               PATH=f"{tools}:{prefix / 'bin'}:{args.build / 'examples'}:{os.environ['PATH']}",
               PKG_CONFIG_PATH=str(libdir), CMAKE_PREFIX_PATH=str(prefix),
               PYTHONPATH=str(args.build / "python"), ANABRANCH_PROGRESS="0",
               # The test machines run as root with few cores; users' commands carry neither.
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1",
               OMPI_MCA_mpi_yield_when_idle="1")
    # docs/cfl3d.md's commands run on the stand-in CFL3D tree the build makes (tests/cfl3d_stub)
    # unless CFL3D names a CFL3D tree (and CFL3D_CASE a case folder)
    standin = args.build / "tests" / "cfl3d_tree"
    if "CFL3D" not in env and (standin / "stamp").exists():
        env.update(CFL3D=str(standin), CFL3D_CASE=str(standin / "case"), CFL3D_CASE9=str(standin / "case"))
    failures, ran = [], 0
    for page in sorted(stage_dir.rglob("*.md")):
        rel = page.relative_to(stage_dir)
        if only and str(rel) not in only and rel.stem not in only:
            continue
        todo = [b for b in blocks(page.read_text()) if b[3]]
        for line, lang, code, runs in todo:
            lines = [s for s in code.splitlines() if s.strip() and not s.strip().startswith("#")]
            for s in lines[:-1]:
                if runs is True and RUNNABLE[lang] == "sh" and re.search(r"&&", s):
                    fail(f"{rel}:{line}: `{s.strip()}`: a check joined by && stops nothing before a block's last line "
                         "(bash -e ignores it): put the check on its own line")
        if not todo:
            continue
        work = out / "run" / str(rel.with_suffix("")).replace("/", "-")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        (work / "examples").symlink_to(SRC / "examples")
        page_env = dict(env, HOME=str(work))  # an example's ~ is its scratch directory
        for line, lang, code, runs in todo:
            if isinstance(runs, str):  # a program for the next blocks
                (work / runs[len("file:"):]).write_text(code)
                continue
            if "$CFL3D" in code and "CFL3D" not in page_env:
                print(f"docs: {rel}:{line}: not run: no CFL3D tree (CFL3D unset, no stand-in built)", flush=True)
                continue
            ran += 1
            if RUNNABLE[lang] == "sh":
                cmd = ["bash", "-e", "-o", "pipefail", "-c", code]
            else:
                cmd = [args.python, "-c", code]
            try:
                p = subprocess.Popen(cmd, cwd=work, env=page_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
                output, _ = p.communicate(timeout=args.timeout)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                output, _ = p.communicate()
                rc = f"timed out after {args.timeout} s"
            if rc != 0:
                failures.append(f"{rel}:{line}: the {lang} example exited {rc}\n{textwrap.indent(code, '  | ')}"
                                f"{textwrap.indent(output[-3000:], '  > ')}")
                break  # the page's later examples build on this one
        shown = sum(1 for b in todo if b[3] is True)
        print(f"docs: {rel}: {shown} examples" + (" FAILED" if failures and failures[-1].startswith(str(rel)) else " ran"))
    for f in failures:
        print(f, file=sys.stderr)
    if failures:
        fail(f"{len(failures)} page(s) with a failing example")
    print(f"docs: {ran} examples ran")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=pathlib.Path, default=SRC / "build")
    ap.add_argument("--out", type=pathlib.Path)
    ap.add_argument("--python", help="the Python of the build (default: BUILD/venv/bin/python, else python3)")
    ap.add_argument("--site-only", action="store_true", help="build the site, run no example")
    ap.add_argument("--run-only", action="store_true", help="run the examples, build no site")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per example (default 300)")
    ap.add_argument("pages", nargs="*", help="run only these pages' examples (commands/merge.md, or merge)")
    args = ap.parse_args()
    args.build = args.build.resolve()
    out = (args.out or args.build / "docs").resolve()
    out.mkdir(parents=True, exist_ok=True)
    if not args.python:
        venv = args.build / "venv/bin/python"
        args.python = str(venv) if venv.exists() else shutil.which("python3")
    exe = args.build / "src/cli/anabranch"
    if not exe.exists():
        fail(f"{exe} is missing: build first (scripts/setup.sh)")
    if not (args.build / "python/anabranch").is_dir():
        fail(f"{args.build / 'python'} has no Python package: configure the build with a Python that has nanobind")
    stage_dir = out / "src"
    names = stage(args, str(exe), stage_dir)
    if not args.run_only:
        if not shutil.which("mkdocs"):
            fail("mkdocs is not installed (apt-get install mkdocs)")
        build_site(stage_dir, out, names)
    if not args.site_only:
        run_examples(args, stage_dir, out, set(args.pages))


if __name__ == "__main__":
    main()
