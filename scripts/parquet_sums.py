#!/usr/bin/env python3
"""Reads every Parquet file of a directory back with pyarrow (an independent reader)
and prints, as JSON, per file stem: its row count and the sum of each numeric column.

Usage: parquet_sums.py DIR
Used by crates/tracecube/tests/export.rs to compare exports with the analyses.
"""

import json
import pathlib
import sys

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pyarrow.types as pt


def main():
    out = {}
    for f in sorted(pathlib.Path(sys.argv[1]).glob("*.parquet")):
        t = pq.read_table(f)
        sums = {}
        for name in t.column_names:
            col = t.column(name)
            if pt.is_integer(col.type) or pt.is_floating(col.type):
                s = pc.sum(col).as_py()
                sums[name] = s if s is not None else 0
        out[f.stem] = {"rows": t.num_rows, "sums": sums, "types": {n: str(t.schema.field(n).type) for n in t.column_names}}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
