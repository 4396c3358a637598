"""`anabranch balance`: the JSON report and its fields, text input, errors."""
import json

from conftest import assert_status


def test_json_report_and_assignment(ab, tmp_path):
    f = tmp_path / "b.json"
    f.write_text(json.dumps({"blocks": [{"id": 1, "cells": [40, 20, 10]}, {"id": 2, "cells": [10, 10, 10]}, {"id": 7, "weight": 500}],
                             "faces": [{"a": 1, "b": 2, "cells": 100}]}))
    r = ab("balance", f, "-n", 4, "--json")
    assert r.returncode == 0, r.stderr
    j = r.json()
    for key in ("imbalance", "roundrobin_imbalance", "cut_cells", "assignment", "load"):
        assert key in j
    assert j["imbalance"] <= 1.05 < j["roundrobin_imbalance"]
    pieces = [a for a in j["assignment"] if a["block"] == 1]
    assert len(pieces) > 1 and all("range" in a and a["pieces"] == len(pieces) for a in pieces)
    assert {a["process"] for a in j["assignment"]} == {0, 1, 2, 3}
    assert abs(sum(a["weight"] for a in j["assignment"]) - (8000 + 1000 + 500)) < 1e-6


def test_text_input_and_table(ab, tmp_path):
    f = tmp_path / "b.txt"
    f.write_text("# id ni nj nk\n" + "".join(f"{i} {10 + i} 10 10\n" for i in range(1, 21)))
    r = ab("balance", f, "-n", 6, "--method", "greedy")
    assert r.returncode == 0, r.stderr
    assert "round-robin" in r.stdout and "imbalance" in r.stdout


def test_bad_files(ab, tmp_path):
    for name, text, expect in (("a.json", '{"blocks": [{"id": 1}]}', "block entry 1"),
                               ("b.json", '{"blocks": [', "not valid JSON"),
                               ("c.txt", "1 2 3\n", "line 1"),
                               ("d.json", '{"blocks": [{"id": 1, "weight": 1}], "faces": [{"a": 1, "b": 5, "cells": 3}]}',
                                "unknown block")):
        f = tmp_path / name
        f.write_text(text)
        r = ab("balance", f, "-n", 2)
        assert_status(r, 1, expect)
        assert len(r.stderr.strip().splitlines()) == 1
    r = ab("balance", tmp_path / "a.json", "-n", 0)
    assert_status(r, 1, "-n")  # a value the command refuses
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
