"""A notebook in a script: load a committed run of the Python kernels (data/python/run.csv) and read
it as one reads any DataFrame.

    python3 examples/python/notebook.py [data/python/run.csv]
"""
import pathlib
import sys

import mmlab

ROOT = pathlib.Path(__file__).resolve().parents[2]
path = sys.argv[1] if len(sys.argv) > 1 else ROOT / "data" / "python" / "run.csv"

# The rows: one per configuration and shape, typed (numbers, categories); the samples: one per trial.
r = mmlab.read(path)
print(r)
print(r.rows.groupby(["algorithm", "status"], observed=True).size().unstack(fill_value=0), "\n")

# Against cuBLAS SGEMM, paired trials: the speed-up's median, its 95% interval and the verdict.
table = mmlab.compare(r, baseline="cublas")
table = table[table["variant"] != "sleep"]  # the Python kernels' sleep variants: the same kernels (see run.log)
best = table.sort_values("speedup").groupby(["m", "n", "k"], observed=True).tail(1)  # the fastest per shape
print(best[["m", "n", "k", "configuration", "speedup", "ci_lo", "ci_hi", "verdict"]].to_string(index=False), "\n")

# The geometric mean of each algorithm's best configuration per shape.
import numpy as np  # noqa: E402
table["log"] = np.log(table["speedup"])
per = table.groupby(["algorithm", "m", "n", "k"], observed=True)["log"].max().groupby("algorithm").mean()
print("geomean speed-up of each algorithm's best configuration per shape, against cuBLAS:")
print(np.exp(per).round(3).to_string())
