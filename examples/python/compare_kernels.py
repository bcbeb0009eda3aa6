"""The Python kernels of kernels.py beside cuBLAS, CUTLASS and the flagship on a sample of the
held-out shapes (experiments/flagship-held-out.ini), every configuration verified first, trials
interleaved, cuBLAS SGEMM (pure FP32) in the same run; then three checks on the same file:

- each kernel's `sleep` variant (a 1 ms time.sleep in the function) against its default: the GPU
  time within max(3%, 1 us), host_ms 1 ms more;
- CuPy's matmul on a stream of its own (cupy_elsewhere, at 4096^3): a `failed` row, not a time;
- mmlab.compare equal to `mmlab-analyze compare --format json`, record by record.

    python3 examples/python/compare_kernels.py --output data/python/run.csv [--trials 10]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kernels  # noqa: E402,F401  (registers triton_matmul, cupy_tiled, torch_matmul, cupy_elsewhere)
import mmlab  # noqa: E402
import pandas as pd  # noqa: E402

SAMPLE = [(1983, 3538, 888), (651, 3569, 814), (3194, 763, 329), (1495, 2792, 634), (502, 816, 380),
          (3975, 1524, 823), (1876, 4022, 356), (4123, 298, 3488), (2557, 6039, 11530), (770, 2399, 436),
          (4096, 4096, 4096)]
PYTHON = ["triton_matmul", "cupy_tiled", "torch_matmul"]


def _same(a, b):
    if b is None:
        return a is None or pd.isna(a)
    if isinstance(b, (int, float)) and not isinstance(b, bool):
        return not pd.isna(a) and float(a) == float(b)
    return str(a) == str(b)


def sleep_check(rows):
    ok = rows[rows["status"] == "ok"]
    key = ["algorithm", "params", "m", "n", "k"]
    awake = ok[ok["variant"] == "default"].set_index(key)
    asleep = ok[ok["variant"] == "sleep"].set_index(key)
    both = awake.join(asleep, lsuffix="_default", rsuffix="_sleep", how="inner")
    gpu = both["median_ms_sleep"] - both["median_ms_default"]
    within = gpu.abs() <= (0.03 * both["median_ms_default"]).clip(lower=0.001)
    host = both["host_ms_sleep"] - both["host_ms_default"]
    print(f"sleep check: {int(within.sum())} of {len(both)} configurations' GPU medians within max(3%, 1 us) of "
          f"the default's; GPU time change median {gpu.median() * 1e3:+.2f} us (largest |change| "
          f"{(gpu.abs() / both['median_ms_default']).max() * 100:.2f}%); host_ms grew by "
          f"{host.min():.3f} ... {host.max():.3f} ms (median {host.median():.3f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", required=True)
    ap.add_argument("--trials", type=int, default=10)
    args = ap.parse_args()
    r = mmlab.run(algorithms=PYTHON + ["cublas", "cutlass", "flagship"], shapes=SAMPLE, trials=args.trials,
                  output=args.output, variant="all",
                  options={"cutlass.variant": "simt", "flagship.variant": "cuda_cores",
                           "triton_matmul.tile": "all", "triton_matmul.bk": "all", "cupy_tiled.tile": "all"})
    r = mmlab.run(algorithms=["cupy_elsewhere", "cublas"], shapes=[(4096, 4096, 4096)], trials=args.trials,
                  output=args.output)
    print(r)
    rows = r.rows
    print(rows.groupby(["algorithm", "status"], observed=True).size().unstack(fill_value=0), "\n")
    sleep_check(rows)
    elsewhere = rows[rows["algorithm"] == "cupy_elsewhere"].iloc[0]
    print(f"cupy_elsewhere: {elsewhere['status']}: {elsewhere['reason']}")

    table = mmlab.compare(r, baseline="cublas")
    analyze = pathlib.Path(os.environ.get("MMLAB_BIN", pathlib.Path(mmlab._lib.library().path).parent)) / "mmlab-analyze"
    records = json.loads(subprocess.run([str(analyze), "compare", str(r.path), "--baseline", "cublas", "--format",
                                         "json"], capture_output=True, text=True, check=True).stdout)["records"]
    same = len(records) == len(table) and all(_same(row[key], value) for row, rec in
                                              zip(table.to_dict("records"), records) for key, value in rec.items())
    print(f"mmlab.compare and mmlab-analyze compare --format json: {len(table)} and {len(records)} records, "
          f"{'identical' if same else 'DIFFERENT'}")
    cols = ["m", "n", "k", "configuration", "median", "baseline_median", "speedup", "ci_lo", "ci_hi", "verdict"]
    best = table[table["algorithm"].isin(PYTHON + ["cutlass", "flagship"])].sort_values("speedup")
    print(best.groupby(["algorithm", "m", "n", "k"], observed=True).tail(1)[cols].to_string(index=False))


if __name__ == "__main__":
    main()
