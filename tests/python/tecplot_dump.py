"""What an independent Tecplot reader finds in a .plt file, saved as a .npz for the tests to
compare (run by the reader's own Python: `tecio` and `tecio-python` both import as tecio, so
each lives in an environment of its own, made by scripts/setup.sh --test).

    python tecplot_dump.py READER FILE OUT.npz      READER: tecio-python or tecio

The .npz holds: meta (a JSON text: title, variables, zones with their name, type, sizes,
solution time, strand as stored (-1: static), which variables and connectivity they share,
min/max where the reader gives them) and, for zone z, `z{z}_v{v}` the values of variable v (as stored, flattened in
the file's order) and `z{z}_c` the connectivity (0-based, elements x nodes)."""
import json
import sys

import numpy as np


def dump_tecio_python(path):
    import tecio
    meta, arrays = {}, {}
    with tecio.open(path) as t:
        meta["title"] = t.title
        meta["variables"] = list(t.variables)
        meta["zones"] = []
        for zi, z in enumerate(t.zones):
            # strand: as stored (-1 static); the reader counts from 1, 0 for static zones
            d = {"name": z.title, "type": z.zone_type.name, "time": float(z.solution_time), "strand": int(z.strand_id) - 1,
                 "shared": [z.variables[v].shared_zone for v in range(len(t.variables))]}
            if z.zone_type.name == "ORDERED":
                d["ijk"] = [int(z.I), int(z.J), int(z.K)]
            else:
                d["nodes"], d["elements"] = int(z.num_nodes), int(z.num_elements)
                d["shared_connectivity"] = z.shared_connectivity
                arrays[f"z{zi}_c"] = np.asarray(z.node_map, dtype=np.int64)
            for v in range(len(t.variables)):
                arrays[f"z{zi}_v{v}"] = np.asarray(z.variables[v].get_values()).ravel(order="F")
            meta["zones"].append(d)
    return meta, arrays


def dump_tecio(path):
    from tecio.tecio import TecplotFile
    t = TecplotFile(path)
    meta = {"title": t.title, "variables": list(t.variables), "zones": []}
    arrays = {}
    for zi in range(t.nzones):
        z, d = t.zones[zi], t.data[zi]
        shared = list(d.shared_var) if d.has_shared_var else [-1] * len(t.variables)
        own = list(d.ivar_zone)
        zd = {"name": z.title, "type": str(getattr(z.zone_type, "name", z.zone_type)), "time": float(z.solution_time),
              "strand": int(z.time_strand),
              "shared": [s if s >= 0 else None for s in shared],
              "minmax": {str(v): [float(d.min_max[k][0]), float(d.min_max[k][1])] for k, v in enumerate(own)}}
        meta["zones"].append(zd)
        for v in range(len(t.variables)):
            arrays[f"z{zi}_v{v}"] = np.asarray(t.get_data(zi, v)).ravel(order="F")
        c = t.get_connect(zi)
        if c is not None:
            arrays[f"z{zi}_c"] = np.asarray(c, dtype=np.int64)
    return meta, arrays


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore")
    reader, path, out = sys.argv[1:4]
    meta, arrays = (dump_tecio_python if reader == "tecio-python" else dump_tecio)(path)
    np.savez(out, meta=json.dumps(meta), **arrays)
