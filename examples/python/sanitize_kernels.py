"""The Python kernels under compute-sanitizer: every tile of the named algorithms on small awkward
shapes, one trial each, timed with events (the blocking kernel would wait on the serialized launches):

    compute-sanitizer --tool memcheck python3 examples/python/sanitize_kernels.py OUT.csv cupy_tiled
    compute-sanitizer --tool racecheck --racecheck-report all python3 examples/python/sanitize_kernels.py OUT.csv triton_matmul
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kernels  # noqa: E402,F401
import mmlab  # noqa: E402

r = mmlab.run(algorithms=sys.argv[2].split(","), shapes=[(1, 1, 1), (33, 65, 17), (127, 129, 131)], trials=1, warmup=0,
              timer="events", variant="default", output=sys.argv[1],
              options={"cupy_tiled.tile": "all", "triton_matmul.tile": "all", "triton_matmul.bk": "all"})
print(r.rows[["algorithm", "params", "m", "n", "k", "status", "reason"]].to_string())
