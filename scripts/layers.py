#!/usr/bin/env python3
"""The library's layers (docs/design.md, src/CMakeLists.txt): each folder under src/ includes
only from itself and the folders before it (the C ABI runs commands: c_api comes after cli). Prints every include that runs upwards and the
folders above 15 files or 4,000 lines; exits 1 on a wrong include.

Usage: scripts/layers.py [SRC]"""
import pathlib
import re
import sys

ORDER = ["core", "grid", "formats", "blockformats", "parallel", "h5", "partition", "io", "layouts", "tools", "cli", "c_api", "cgns"]

src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent / "src")
include = re.compile(r'^\s*#\s*include\s+"([a-z_0-9]+)/[^"]+"', re.M)
wrong = []
for folder in sorted(p for p in src.iterdir() if p.is_dir()):
    if folder.name not in ORDER:
        wrong.append(f"src/{folder.name}: a folder the layers do not name (add it to ORDER and to docs/design.md)")
        continue
    rank = ORDER.index(folder.name)
    files = [f for f in folder.iterdir() if f.suffix in (".cpp", ".hpp")]
    lines = sum(len(f.read_text().splitlines()) for f in files)
    if len(files) > 15 or lines > 4000:
        print(f"note: src/{folder.name} holds {len(files)} files, {lines} lines")
    for f in files:
        for m in include.finditer(f.read_text()):
            to = m.group(1)
            if to not in ORDER:
                continue
            if ORDER.index(to) > rank:
                wrong.append(f"src/{folder.name}/{f.name}: includes {to}/, a layer above {folder.name}/")
for w in wrong:
    print(w)
sys.exit(1 if wrong else 0)
