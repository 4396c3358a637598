"""merge on cases drawn at random, against numpy: a mesh cut into 2 to 9 parts that disagree
on their interface nodes (each part's values shifted by its own amount), some parts in the
other byte order; the merged file holds, at every node, the value of the last part holding
it (gretel's rule), in part 0's precision and byte order. The serial merge's two threads are
run one after the other in both orders (ANABRANCH_TEST_MERGE_TEAMS), so that a node two
parts both write shows whatever the machine's timing; the merge under mpiexec (2 and 3
ranks) gives the same file."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import conftest
import gen
import slf

pytestmark = [pytest.mark.formats, pytest.mark.generated]


def other_byte_order(path):
    """Rewrites a SERAFIN file in the other byte order (numpy: every record's numbers swapped)."""
    s = slf.read(path)
    order = "<" if s.order == ">" else ">"
    names = [(v[:16], v[16:]) for v in s.vars]
    data = gen.serafin(s.title.decode("latin-1"), names, s.ikle, s.ipobo, s.x, s.y,
                       [(t, list(vals)) for t, vals in s.frames], order=order, real="f8" if s.rs == 8 else "f4",
                       date=s.date, iparam=s.iparam)
    path.write_bytes(data)


@gen.cases(15)
@given(seed=st.integers(0, 2**32 - 1), elements=st.integers(50, 4000), parts=st.integers(2, 9), frames=st.integers(1, 3),
       nvar=st.integers(1, 3), double=st.booleans(), swapped=st.integers(0, 9), ranks=st.sampled_from([0, 2, 3]))
def test_merge_takes_the_last_parts_value(seed, elements, parts, frames, nvar, double, swapped, ranks):
    rng = np.random.default_rng(seed)
    with gen.scratch() as tmp:
        args = ["generate", "-n", elements, "--frames", frames, "--vars", nvar, "-o", tmp / "m.slf"]
        if double:
            args += ["--precision", "double"]
        conftest.assert_status(gen.ab(*args), 0)
        g = slf.read(tmp / "m.slf")
        parts = min(parts, g.nelem)
        (tmp / "p").mkdir()
        conftest.assert_status(gen.ab("partition", tmp / "m.slf", "-n", parts, "--method", "sfc", "-o", tmp / "p"), 0)
        files = [tmp / "p" / f"m.slf{parts - 1:05d}-{k:05d}" for k in range(parts)]
        want = [[v.astype(np.float64).copy() for v in vals] for _, vals in g.frames]
        for k, path in enumerate(files):
            slf.shift_values(path, float(rng.integers(1, 1000)) * (k + 1))
            if k > 0 and rng.random() < swapped / 10:
                other_byte_order(path)
            part = slf.read(path)
            for f in range(frames):
                for v in range(nvar):
                    want[f][v][part.ipobo - 1] = part.frames[f][1][v]
        first = slf.read(files[0])
        runs = [("alone", {"ANABRANCH_TEST_MERGE_TEAMS": order}) for order in ("forward", "reverse")]
        if ranks:
            runs.append((ranks, {}))
        outputs = []
        for how, env in runs:
            out = tmp / f"out-{len(outputs)}.slf"
            args = ["merge", tmp / "p" / "m.slf", "--geo", tmp / "m.slf", "-o", out]
            if how == "alone":
                r = conftest.run([conftest.EXE, *map(str, args)], capture_output=True, text=True, timeout=300,
                                 env=dict(conftest.MPI_ENV, **env))
            else:
                r = conftest.mpirun(how, conftest.EXE, *args)
            conftest.assert_status(r, 0)
            got = slf.read(out)
            assert got.order == first.order and got.rs == first.rs, (how, env)
            for f in range(frames):
                for v in range(nvar):
                    np.testing.assert_array_equal(got.frames[f][1][v], want[f][v].astype(got.ftype), err_msg=f"{how} {env} frame {f} var {v}")
            outputs.append(out.read_bytes())
        assert all(o == outputs[0] for o in outputs)
