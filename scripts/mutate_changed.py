#!/usr/bin/env python3
"""Unbiased mutants on a change (`scripts/mutate.sh --changed BASE`).

The mutants are universalmutator's (its C, C++, Fortran and Python rules), made on the lines
the change touched (`git diff BASE`, the working tree included). They are taken in a seeded
random order; each is applied to a scratch copy of the tree and built; one that does not
build is stillborn, one whose object code is the same as the unmutated build's is equivalent
(trivial compiler equivalence), and the others, up to --count, run against the tests of their
area (tests/areas.txt): killed when a test fails, surviving when all pass. Survivors are
listed for a person to judge: a test added, or the mutant marked equivalent, with the reason,
in tests/mutants-equivalent.txt (read here; those are not run).

Exit status: the number of surviving mutants (0: every mutant run was killed).
"""
import argparse
import ast
import hashlib
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LANGUAGES = {".cpp": "cpp", ".hpp": "cpp", ".cc": "cpp", ".h": "c", ".c": "c", ".f90": "fortran", ".F90": "fortran",
             ".F": "fortran", ".f": "fortran", ".py": "python"}
SOURCES = ("src/", "include/", "bindings/", "integrations/")
COMMENT = {"cpp": ("//", "/*", "*"), "c": ("//", "/*", "*"), "fortran": ("!", "c ", "C ", "*"), "python": ("#",)}


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def python_code(text):
    """A Python module's syntax tree without its docstrings (text a user reads, not runs)."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body[0] = ast.Pass()
    return ast.dump(tree)


def changed_lines(base):
    """{path: set of line numbers} of the source lines the change adds or alters."""
    out = {}
    names = sh(["git", "diff", "--name-only", "--diff-filter=AM", base, "--"], cwd=ROOT).split()
    names += sh(["git", "ls-files", "--others", "--exclude-standard"], cwd=ROOT).split()  # new files
    for path in sorted(set(names)):
        ext = os.path.splitext(path)[1]
        if not path.startswith(SOURCES) or ext not in LANGUAGES or not os.path.exists(os.path.join(ROOT, path)):
            continue
        tracked = subprocess.run(["git", "cat-file", "-e", f"{base}:{path}"], cwd=ROOT, capture_output=True).returncode == 0
        if not tracked:
            with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
                out[path] = set(range(1, sum(1 for _ in f) + 1))
            continue
        lines = set()
        for m in re.finditer(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", sh(["git", "diff", "-U0", base, "--", path], cwd=ROOT), re.M):
            start, count = int(m.group(1)), int(m.group(2) or 1)
            lines.update(range(start, start + count))
        if lines:
            out[path] = lines
    return out


def worth_mutating(text, language):
    s = text.strip()
    return bool(s) and not s.startswith(COMMENT[language]) and s not in ("{", "}", "};", ")", "]", "else", "else {", "} else {")


def generate(path, lines, scratch, mutate_exe):
    """universalmutator's mutants of the given lines of path: [(path, line, before, after)]."""
    language = LANGUAGES[os.path.splitext(path)[1]]
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
        source = f.read().split("\n")
    keep = sorted(n for n in lines if n <= len(source) and worth_mutating(source[n - 1], language))
    if not keep:
        return []
    folder = os.path.join(scratch, "gen", path.replace("/", "__"))
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with open(os.path.join(folder, "lines"), "w") as f:
        f.write("\n".join(map(str, keep)))
    # universalmutator picks the language from the suffix; .F (fixed-form Fortran) it does not know.
    copy = os.path.join(folder, "source" + (".f" if language == "fortran" else os.path.splitext(path)[1]))
    # It takes "{-" for the start of a Haskell block comment in every language and mutates
    # nothing after it until a "-}": C++'s `std::int32_t{-1}` hid the rest of a file. The copy
    # has "{ -" there (the same program); the mutants are read against the copy and given
    # back the original spelling.
    shown = [line.replace("{-", "{ -") if language != "haskell" else line for line in source]
    with open(copy, "w", encoding="utf-8") as f:
        f.write("\n".join(shown))
    subprocess.run([mutate_exe, copy, language, "--noCheck", "--lines", os.path.join(folder, "lines"), "--mutantDir", folder],
                   check=True, capture_output=True, text=True, cwd=folder)
    out = []
    for name in sorted(os.listdir(folder)):
        if ".mutant." not in name:
            continue
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
            mutated = f.read().split("\n")
        diff = [i for i in range(min(len(shown), len(mutated))) if shown[i] != mutated[i]]
        if len(diff) != 1 or len(shown) != len(mutated):
            continue
        i = diff[0]
        after = mutated[i].replace("{ -", "{-") if shown[i] != source[i] else mutated[i]
        if after != source[i]:
            out.append((path, i + 1, source[i], after))
    return out


def read_equivalents(path):
    """The mutants a person judged equivalent: {(file, before, after): why}, lines compared
    without their leading and trailing blanks."""
    marked, entry = {}, {}
    if not os.path.exists(path):
        return marked

    def done():
        if entry:
            missing = {"file", "from", "to", "why"} - set(entry)
            if missing:
                sys.exit(f"mutate: {path}: an entry without {', '.join(sorted(missing))}: {entry}")
            marked[(entry["file"], entry["from"], entry["to"])] = entry["why"]
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            m = re.match(r"^(-\s+)?\s*(file|from|to|why):\s?(.*)$", line)
            if not m:
                sys.exit(f"mutate: {path}: cannot read the line {line!r}")
            if m.group(1):
                done()
                entry = {}
            entry[m.group(2)] = m.group(3).strip()
        done()
    return marked


def read_areas(path):
    areas = []
    with open(path) as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip() if raw.lstrip().startswith("#") else raw.strip()
            if not line:
                continue
            prefix, _, rest = line.partition(" ")
            selections = []
            for part in rest.split(";"):
                kind, _, args = part.strip().partition(" ")
                if kind not in ("ctest", "py"):
                    sys.exit(f"mutate: {path}: {part!r} is neither `ctest REGEX` nor `py ARGS`")
                selections.append((kind, args.strip()))
            areas.append((prefix, selections))
    return areas


def area_of(path, areas):
    best = max((a for a in areas if path.startswith(a[0])), key=lambda a: len(a[0]), default=None)
    if best is None:
        sys.exit(f"mutate: no area in tests/areas.txt holds {path}: add one")
    return best


class Tree:
    """The scratch copy of the working tree and its build."""

    def __init__(self, work, jobs):
        self.work, self.jobs = work, jobs
        self.tree, self.build = os.path.join(work, "tree"), os.path.join(work, "build")
        self.py = os.path.join(ROOT, "build", "venv", "bin", "python")

    def prepare(self):
        print(f"mutate: copying the tree to {self.tree} and building it (once)", flush=True)
        shutil.rmtree(self.tree, ignore_errors=True)
        os.makedirs(self.tree)
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                               capture_output=True).stdout
        subprocess.run(f"tar --null -T - -cf - | tar -m -xf - -C {shlex.quote(self.tree)}", shell=True, cwd=ROOT, input=files,
                       check=True)
        data = os.path.normpath(os.path.join(ROOT, "..", "shared", "data", "telemac"))
        subprocess.run(["cmake", "-S", self.tree, "-B", self.build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                        f"-DAB_TEST_PYTHON={self.py}", f"-DPython_EXECUTABLE={self.py}", f"-DAB_TELEMAC_DATA={data}"],
                       check=True, capture_output=True)
        if not self.compile():
            sys.exit(f"mutate: the unmutated tree does not build (see {self.work}/build.log)")
        self.baseline = self.objects()
        env = json.loads(sh(["ctest", "--test-dir", self.build, "--show-only=json-v1"]))
        self.env = dict(os.environ)
        for t in env["tests"]:
            if t["name"] == "cli":
                for p in t.get("properties", []):
                    if p["name"] == "ENVIRONMENT":
                        self.env.update(kv.split("=", 1) for kv in p["value"])

    def compile(self):
        with open(os.path.join(self.work, "build.log"), "w") as log:
            return subprocess.run(["cmake", "--build", self.build, "-j", str(self.jobs)], stdout=log, stderr=subprocess.STDOUT).returncode == 0

    def objects(self):
        """{object file: digest} of the build's compiled objects."""
        out = {}
        for folder, _, names in os.walk(self.build):
            if "CMakeFiles" not in folder:
                continue
            for n in names:
                if n.endswith((".o", ".obj")):
                    p = os.path.join(folder, n)
                    with open(p, "rb") as f:
                        out[p] = hashlib.sha1(f.read()).hexdigest()
        return out

    def run(self, selections, log_path, timeout):
        """Runs the area's selections in order; the first that fails names the killer."""
        with open(log_path, "w") as log:
            for kind, args in selections:
                if kind == "ctest":
                    cmd = ["ctest", "--test-dir", self.build, "--output-on-failure", "-j", str(self.jobs), "-R", args]
                else:
                    parts = []
                    for a in shlex.split(args):
                        parts.append(os.path.join(self.tree, "tests", "python", a) if a.startswith("test_") else a)
                    if not any(p.startswith(os.path.join(self.tree, "tests", "python")) for p in parts):
                        parts.append(os.path.join(self.tree, "tests", "python"))
                    cmd = [self.py, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *parts]
                log.write(f"$ {shlex.join(cmd)}\n")
                log.flush()
                try:
                    r = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env, cwd=self.build, timeout=timeout)
                except subprocess.TimeoutExpired:
                    return f"{kind} {args} (timed out after {timeout} s)"
                if r.returncode == 5 and kind == "py":  # nothing selected
                    continue
                if r.returncode != 0:
                    return f"{kind} {args}"
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("base", help="the commit the change is measured from (git diff BASE)")
    p.add_argument("--count", type=int, default=30, help="mutants to run (those that build and change the object code; default 30)")
    p.add_argument("--seed", type=int, default=1, help="the sample's seed (default 1)")
    p.add_argument("--list", action="store_true", help="list the mutants made, run none")
    p.add_argument("--timeout", type=int, default=900, help="seconds an area's tests may take for one mutant (default 900)")
    p.add_argument("--work", default=os.environ.get("MUTATE_DIR", os.path.join(ROOT, "build-mutate")))
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    o = p.parse_args()

    mutate_exe = shutil.which("mutate", path=os.path.join(ROOT, "build", "venv", "bin")) or shutil.which("mutate")
    if not mutate_exe:
        sys.exit("mutate: universalmutator is not installed (bash scripts/setup.sh --test installs it)")
    os.makedirs(o.work, exist_ok=True)
    areas = read_areas(os.path.join(ROOT, "tests", "areas.txt"))
    marked = read_equivalents(os.path.join(ROOT, "tests", "mutants-equivalent.txt"))
    lines = changed_lines(o.base)
    mutants = []
    for path, ls in lines.items():
        area_of(path, areas)  # every changed file has tests
        mutants += generate(path, ls, o.work, mutate_exe)
    mutants = sorted(set(mutants))
    print(f"mutate: {len(mutants)} mutants on {sum(len(v) for v in lines.values())} changed lines of {len(lines)} files "
          f"(against {o.base}); seed {o.seed}, {o.count} to run", flush=True)
    random.Random(o.seed).shuffle(mutants)
    if o.list:
        for path, n, before, after in mutants:
            print(f"{path}:{n}: {before.strip()}  ==>  {after.strip()}")
        return 0

    tree = Tree(o.work, o.jobs)
    tree.prepare()
    results = []
    counts = dict(killed=0, survived=0, equivalent=0, marked=0, stillborn=0)
    started = time.time()
    for path, n, before, after in mutants:
        if counts["killed"] + counts["survived"] >= o.count:
            break
        key = (path, before.strip(), after.strip())
        where = f"{path}:{n}: {before.strip()}  ==>  {after.strip()}"
        if key in marked:
            counts["marked"] += 1
            results.append(("equivalent (marked: " + marked[key] + ")", where))
            continue
        target = os.path.join(tree.tree, path)
        with open(target, encoding="utf-8", errors="replace") as f:
            original = f.read()
        text = original.split("\n")
        text[n - 1] = after
        mutated = "\n".join(text)
        try:
            with open(target, "w") as f:
                f.write(mutated)
            if path.endswith(".py"):
                try:
                    same = python_code(original) == python_code(mutated)
                except SyntaxError:
                    counts["stillborn"] += 1
                    continue
                if same:
                    counts["equivalent"] += 1
                    results.append(("equivalent (same syntax tree, docstrings aside)", where))
                    continue
            if not tree.compile():  # Python files too: the build copies the package, and a C++ file was just restored
                counts["stillborn"] += 1
                continue
            if not path.endswith(".py") and tree.objects() == tree.baseline:
                counts["equivalent"] += 1
                results.append(("equivalent (same object code)", where))
                continue
            k = counts["killed"] + counts["survived"] + 1
            print(f"mutate: [{k}/{o.count}] {where}", flush=True)
            prefix, selections = area_of(path, areas)
            killer = tree.run(selections, os.path.join(o.work, f"mutant-{k}.log"), o.timeout)
            status = f"killed by {killer}" if killer else "SURVIVED"
            counts["killed" if killer else "survived"] += 1
            print(f"mutate:     {status}", flush=True)
            results.append((status, where))
        finally:
            with open(target, "w") as f:
                f.write(original)
    tree.compile()  # back to the unmutated tree

    run = counts["killed"] + counts["survived"]
    report = [f"mutate --changed {o.base} (seed {o.seed}): {run} mutants run in {time.time() - started:.0f} s: "
              f"{counts['killed']} killed, {counts['survived']} survived"
              + (f" ({100.0 * counts['killed'] / run:.0f}% killed)" if run else "")
              + f"; {counts['equivalent']} equivalent by their object code, {counts['marked']} marked equivalent, "
              f"{counts['stillborn']} did not build"]
    report += [f"  {status}: {where}" for status, where in results]
    survivors = [where for status, where in results if status == "SURVIVED"]
    if survivors:
        report.append("Survivors, for a person to judge (add a test, or mark the mutant equivalent with its reason in "
                      "tests/mutants-equivalent.txt):")
        report += [f"  {w}" for w in survivors]
    text = "\n".join(report)
    print(text)
    with open(os.path.join(o.work, "report.txt"), "w") as f:
        f.write(text + "\n")
    return min(len(survivors), 100)


if __name__ == "__main__":
    sys.exit(main())
