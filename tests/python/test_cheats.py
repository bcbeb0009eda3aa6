"""Issue #60: the Python cheats of tests/cheats/cheats.py, each run in several separate runs: every
cheat's row `failed`, every honest twin's `ok` (the GPU ones where torch sees a GPU)."""
import os
import sys

import pytest

import mmlab

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "cheats"))
import cheats  # noqa: E402  (registers the cheats and their twins)

RUNS = int(os.environ.get("MMLAB_CHEAT_RUNS", "5"))  # the device run: 20


def judged(tmp_path, names, shapes):
    """Every run of them, then one verdict: every cheat's row `failed`, every twin's `ok` (all runs run, so
    a miss is counted, not only found: the device run's log says how many of how many)."""
    wrong, rows = [], 0
    for run in range(RUNS):
        r = mmlab.run(algorithms=names, shapes=shapes, trials=5, warmup=1, seed=run + 1,
                      output=tmp_path / f"run{run}.csv")
        # Every row there, none failed by a CUDA error (a cheat is caught by the lab's judgement,
        # not by a crash that ends the run).
        assert len(r.rows) == len(names) * len(shapes), f"run {run}: {len(r.rows)} rows"
        fatal = r.rows[r.rows["reason"].astype(str).str.contains("cudaError")]
        assert fatal.empty, fatal[["algorithm", "m", "n", "k", "reason"]].to_string()
        for _, row in r.rows.iterrows():
            rows += 1
            expected = "failed" if row["algorithm"].startswith("pycheat_") else "ok"
            if row["status"] != expected:
                wrong.append(f"run {run + 1}: {row['algorithm']} {row['m']}x{row['n']}x{row['k']}: "
                             f"{row['status']} {row['reason']}")
    print(f"{len(wrong)} of {rows} rows misjudged in {RUNS} runs of {', '.join(names)}")
    assert not wrong, "\n".join(wrong)


def test_host_cheats_fail_and_their_twins_pass(tmp_path):
    judged(tmp_path, cheats.HOST, [(48, 40, 32), (65, 33, 17)])


def test_memoising_cheats_fail_and_their_twins_pass(tmp_path):
    """Issue #81: every timed trial on inputs of its own, and a row faster on the inputs it was verified on
    fails (shapes whose products take 0.05 ms or more)."""
    judged(tmp_path, cheats.MEMO, [(700, 300, 500), (640, 480, 560)])


def test_gpu_cheats_fail_and_their_twins_pass(tmp_path):
    if not cheats.GPU:
        pytest.skip("no torch with a GPU")
    judged(tmp_path, cheats.GPU, [(383, 405, 1508), (1375, 526, 130)])


def test_gpu_memoising_cheats_fail_and_their_twins_pass(tmp_path):
    """Issue #81 on the GPU: a torch memo by its inputs' content fails, its twin passes."""
    if not cheats.GPU_MEMO:
        pytest.skip("no torch with a GPU")
    judged(tmp_path, cheats.GPU_MEMO, [(4096, 4096, 2048), (3000, 1500, 2500)])
