"""mmlab from Python on the CPU: the lab's listing, runs of host algorithms (built in and written in
Python), failures as rows, bad arguments as ValueError with the program's message, read() of every
committed CSV, compare() against mmlab-analyze."""
import json
import math
import pathlib
import subprocess

import numpy as np
import pandas as pd
import pytest

import mmlab


def test_algorithms_lists_the_lab():
    frame = mmlab.algorithms()
    assert {"algorithm", "variant", "backend", "axes", "defaults", "deterministic"} <= set(frame.columns)
    names = set(frame["algorithm"])
    assert {"eigen", "cublas", "flagship", "tiled"} <= names
    tiled = frame[frame["algorithm"] == "tiled"].iloc[0]
    assert "tile" in tiled["axes"] and tiled["defaults"]["tile"] in tiled["axes"]["tile"]
    assert frame.loc[frame["algorithm"] == "eigen", "backend"].iloc[0] == "host"


def test_run_eigen_returns_typed_rows_and_samples(tmp_path):
    r = mmlab.run(algorithms=["eigen"], shapes=[(67, 45, 33), (128, 128, 128)], trials=3,
                  output=tmp_path / "eigen.csv")
    rows = r.ok()
    assert len(rows) == 2 and rows["verified_entries"].gt(0).all()
    assert str(r.rows["m"].dtype) == "Int64" and r.rows["median_ms"].dtype == np.float64
    assert isinstance(r.rows["status"].dtype, pd.CategoricalDtype)
    assert isinstance(r.rows["scope"].dtype, pd.CategoricalDtype)
    assert sorted(r.rows["m"].tolist()) == [67, 128]
    assert len(r.samples) == 6 and r.samples["ms"].dtype == np.float64
    assert (r.rows["max_rel_err"] < 1e-4).all()


def test_run_an_experiment_file_with_keys_that_override_it(root, tmp_path):
    r = mmlab.run(root / "experiments" / "quick.ini", sizes=[64, 96], trials=2, warmup=0, output=tmp_path / "q.csv")
    assert set(r.rows["algorithm"]) == {"naive", "tiled", "cublas", "eigen"}
    assert sorted(set(r.rows["m"])) == [64, 96]
    eigen = r.rows[r.rows["algorithm"] == "eigen"]
    assert (eigen["status"] == "ok").all() and (eigen["trials"] == 2).all()
    gpu = r.rows[r.rows["algorithm"] != "eigen"]  # here (no GPU) skipped with the reason; on a GPU, run
    assert ((gpu["status"] == "ok") | ((gpu["status"] == "skipped") & gpu["reason"].str.len().gt(0))).all()


def test_a_numpy_algorithm_is_verified_and_timed(tmp_path):
    @mmlab.algorithm("np_matmul_test", backend="host", axes={"blocks": [1, 2]})
    def np_matmul(a, b, c, *, params, stream):
        """numpy's matmul, in row blocks."""
        assert stream is None and isinstance(params["blocks"], int)
        for rows in np.array_split(np.arange(a.shape[0]), params["blocks"]):
            c[rows] = a[rows] @ b

    r = mmlab.run(algorithms=[np_matmul, "eigen"], shapes=[(65, 33, 17)], trials=3, output=tmp_path / "np.csv",
                  np_matmul_test__blocks="1,2")
    mine = r.rows[r.rows["algorithm"] == "np_matmul_test"]
    assert list(mine["status"]) == ["ok", "ok"], mine["reason"].tolist()
    assert sorted(mine["params"]) == ["blocks=1", "blocks=2"]
    assert mine["plugin"].iloc[0].startswith("python:") and mine["plugin_hash"].iloc[0].startswith("sha256:")
    assert "np_matmul_test" in set(mmlab.algorithms()["algorithm"])


def test_a_raising_or_wrong_algorithm_is_a_failed_row_and_the_sweep_goes_on(tmp_path):
    @mmlab.algorithm("py_raises", backend="host")
    def raises(a, b, c, *, params, stream):
        raise RuntimeError("out of ideas")

    @mmlab.algorithm("py_wrong", backend="host")
    def wrong(a, b, c, *, params, stream):
        c[:] = a @ b
        c[0, 0] += 1.0

    @mmlab.algorithm("py_old_numba", backend="host")
    def old_numba(a, b, c, *, params, stream):  # what numba-cuda 0.30 raised on numpy 2.5
        raise AttributeError("module 'numpy' has no attribute 'row_stack'")

    @mmlab.algorithm("py_picky", backend="host", supports=lambda m, n, k, p: "only squares" if m != n else None)
    def picky(a, b, c, *, params, stream):
        c[:] = a @ b

    r = mmlab.run(algorithms=[raises, wrong, old_numba, picky, "eigen"], shapes=[(40, 30, 20)], trials=2,
                  output=tmp_path / "f.csv")
    by = r.rows.set_index("algorithm")
    assert by.loc["py_raises", "status"] == "failed"
    assert "RuntimeError: out of ideas" in by.loc["py_raises", "reason"]
    assert by.loc["py_wrong", "status"] == "failed"
    assert by.loc["py_old_numba", "status"] == "failed" and "pip install 'numpy<2.4'" in by.loc["py_old_numba", "reason"]
    assert by.loc["py_picky", "status"] == "skipped" and "only squares" in by.loc["py_picky", "reason"]
    assert by.loc["eigen", "status"] == "ok"


def test_a_host_function_right_on_its_first_call_only_fails(tmp_path):
    """Issue #60: each timed trial's C is poisoned before it and judged after it, on host rows too; a
    function that computes C once (the verified call) and then nothing, or zeros, fails; its honest
    twin does not."""
    calls = {"once": 0, "zeros": 0}

    @mmlab.algorithm("py_once", backend="host")
    def once(a, b, c, *, params, stream):
        calls["once"] += 1
        if calls["once"] == 1:
            c[:] = a @ b

    @mmlab.algorithm("py_zeros_after", backend="host")
    def zeros_after(a, b, c, *, params, stream):
        calls["zeros"] += 1
        c[:] = a @ b if calls["zeros"] == 1 else 0.0

    @mmlab.algorithm("py_honest", backend="host")
    def honest(a, b, c, *, params, stream):
        c[:] = a @ b

    r = mmlab.run(algorithms=[once, zeros_after, honest], shapes=[(48, 40, 32)], trials=3, warmup=1,
                  output=tmp_path / "once.csv")
    by = r.rows.set_index("algorithm")
    for cheat in ("py_once", "py_zeros_after"):
        assert by.loc[cheat, "status"] == "failed", by.loc[cheat, "reason"]
        assert "timed trials is not the product" in by.loc[cheat, "reason"], by.loc[cheat, "reason"]
    assert by.loc["py_honest", "status"] == "ok", by.loc["py_honest", "reason"]


def test_the_ctypes_declarations_have_the_c_headers_layouts():
    """Issue #64: each ctypes Structure the package hands the library has the size and field offsets
    of its struct in include/mmlab/plugin.h and lab.h, as the library was compiled."""
    import ctypes
    from mmlab import _algorithm as a
    want = mmlab._lib.layouts()
    mine = {"mmlab_problem": a._Problem, "mmlab_param": a._Param, "mmlab_params": a._Params,
            "mmlab_variant": a._Variant, "mmlab_axis": a._Axis, "mmlab_algorithm": a._CAlgorithm,
            "mmlab_plugin_info": a._Info, "mmlab_value": mmlab._lib.Value, "mmlab_row_sink": mmlab._lib.RowSink,
            "mmlab_table_sink": mmlab._lib.TableSink, "mmlab_compare_options": mmlab._lib.CompareOptions}
    assert set(mine) == set(want)
    for name, cls in mine.items():
        assert ctypes.sizeof(cls) == want[name]["size"], name
        assert {f: getattr(cls, f).offset for f, _ in cls._fields_} == want[name]["fields"], name


def test_two_threads_run_the_lab_at_once(tmp_path):
    """Issue #64: ctypes releases the GIL, so two threads' commands meet in the library; each thread gets
    its own listing, rows and version (the library runs one command at a time)."""
    import threading
    shapes = {0: [(37, 29, 23)], 1: [(52, 44, 36)]}
    seen, errors = {0: [], 1: []}, []

    def work(i):
        try:
            for j in range(6):
                listed = mmlab.algorithms()
                r = mmlab.run(algorithms=["eigen"], shapes=shapes[i], trials=2, warmup=0,
                              output=tmp_path / f"{i}-{j}.csv")
                seen[i].append((len(listed), r.rows["m"].tolist(), r.rows["status"].tolist(), mmlab.version()))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    listed = len(mmlab.algorithms())
    for i in (0, 1):
        assert len(seen[i]) == 6
        for count, m, status, version in seen[i]:
            assert count == listed and m == [shapes[i][0][0]] and status == ["ok"] and version == mmlab.version()


def test_a_command_from_inside_a_running_one_is_refused_not_a_deadlock(tmp_path):
    said, answered = [], []

    @mmlab.algorithm("py_calls_the_lab", backend="host")
    def calls_the_lab(a, b, c, *, params, stream):
        try:
            mmlab._lib.command(["list"])
        except ValueError as e:
            said.append(str(e))
        # What is not a command (the revision, the catalog: typed calls) answers from inside too.
        answered.append((mmlab.version(), len(mmlab.algorithms())))
        c[:] = a @ b

    r = mmlab.run(algorithms=[calls_the_lab], shapes=[(24, 16, 8)], trials=2, output=tmp_path / "in.csv")
    assert r.rows["status"].tolist() == ["ok"]
    assert said and all("inside a running command" in s for s in said)
    assert answered and all(v == mmlab.version() and n > 0 for v, n in answered)


def no_temporary_files(tmp_path, monkeypatch):
    """The package's temporary files and folders recorded (and made under tmp_path/temp): the list."""
    import tempfile
    made = []
    (tmp_path / "temp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temp"))
    for name in ("mkdtemp", "mkstemp"):
        real = getattr(tempfile, name)
        monkeypatch.setattr(tempfile, name, lambda *a, _real=real, _name=name, **k: made.append(_name) or _real(*a, **k))
    return made


def test_a_run_without_output_writes_no_file(root, tmp_path, monkeypatch):
    """Issue #64: the rows come from the library's sink; nothing is written or read between mmlab.run and
    its DataFrames (not the experiment file's output, not a temporary file) unless output= asks."""
    made = no_temporary_files(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "e.ini").write_text("algorithms = eigen\nsize = 40\ntrials = 3\noutput = named.csv\n")
    r = mmlab.run(tmp_path / "e.ini", shapes=[(31, 17, 9)], warmup=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.ini", "temp"]
    assert not made and not list((tmp_path / "temp").iterdir())
    assert r.path is None and r.rows["status"].tolist() == ["ok"] and r.rows["m"].tolist() == [31]
    assert len(r.samples) == 3
    assert set(r.samples["run_id"]) == set(r.rows["run_id"])
    # asked for, the file is written and read: the same columns, typed alike, as the sink's rows
    w = mmlab.run(tmp_path / "e.ini", shapes=[(31, 17, 9)], warmup=0, output=tmp_path / "out.csv")
    assert (tmp_path / "out.csv").is_file() and w.path == tmp_path / "out.csv"
    assert list(w.rows.dtypes.astype(str)) == list(r.rows.dtypes.astype(str))
    assert list(w.samples.dtypes.astype(str)) == list(r.samples.dtypes.astype(str))
    same = ["algorithm", "variant", "params", "m", "n", "k", "status", "verified", "trials", "schema"]
    pd.testing.assert_frame_equal(w.rows[same], r.rows[same], check_categorical=False)


def test_resume_from_python_goes_on_where_a_file_left_off(tmp_path):
    """Issue #80: resume=True with output= (the output is set before the other keys are checked)."""
    out = tmp_path / "resumed.csv"
    first = mmlab.run(algorithms=["eigen"], shapes=[(9, 5, 3)], trials=2, warmup=0, output=out)
    assert len(first.rows) == 1
    again = mmlab.run(algorithms=["eigen"], shapes=[(9, 5, 3), (7, 7, 7)], trials=2, warmup=0, output=out,
                      resume=True)
    assert sorted(again.rows["m"].tolist()) == [7, 9]  # 9x5x3 kept, not run again; 7x7x7 added
    assert again.rows["run_id"].nunique() == 2


def test_ctrl_c_hands_back_the_rows_finished_before_it(tmp_path):
    """Issue #80: an interrupted run without output= raises mmlab.Interrupted (a KeyboardInterrupt)
    carrying the rows it finished; with output= the file's rows, and resume=True completes it."""
    import os
    import signal

    stop = [True]

    @mmlab.algorithm("stops_the_run", backend="host")
    def stops(a, b, c, *, params, stream):
        c[...] = a @ b
        if stop[0] and a.shape == (8, 8):  # the second configuration's first call
            stop[0] = False
            os.kill(os.getpid(), signal.SIGINT)

    shapes = [(9, 5, 3), (8, 8, 8), (7, 6, 5), (6, 6, 6)]
    for output in (None, tmp_path / "stopped.csv"):
        stop[0] = True
        with pytest.raises(mmlab.Interrupted) as stopped:
            mmlab.run(algorithms=[stops], shapes=shapes, trials=2, warmup=0, order="sequential", output=output)
        assert isinstance(stopped.value, KeyboardInterrupt)
        rows = stopped.value.results.rows
        assert 1 <= len(rows) < len(shapes) and (rows["status"] == "ok").all()
        assert len(stopped.value.results.samples) == 2 * len(rows)
    done = mmlab.run(algorithms=[stops], shapes=shapes, trials=2, warmup=0, order="sequential",
                     output=tmp_path / "stopped.csv", resume=True)
    assert sorted(map(tuple, done.rows[["m", "n", "k"]].values.tolist())) == sorted(shapes)


def test_read_of_a_missing_file_or_a_folder_is_the_labs_value_error(tmp_path):
    """Issue #80: mmlab.read raises ValueError in the lab's words, as for every file it cannot read."""
    with pytest.raises(ValueError, match="no such file"):
        mmlab.read(tmp_path / "nope.csv")
    with pytest.raises(ValueError, match="a folder"):
        mmlab.read(tmp_path)


def test_a_new_column_reaches_the_frame_without_python(root):
    """Issue #64: a run's frame has exactly the schema's columns, in its order, typed by it, and python/
    names none of the columns added last (a column the lab adds needs no change there)."""
    r = mmlab.run(algorithms=["eigen"], shapes=[(9, 7, 5)], trials=3)
    schema = mmlab._lib.schema()
    assert list(r.rows.columns) == [c["name"] for c in schema["results"]]
    assert list(r.samples.columns) == [c["name"] for c in schema["samples"]]
    for c in schema["results"]:
        if c["type"] == "number":
            assert r.rows[c["name"]].dtype == np.float64, c["name"]
    text = "".join(p.read_text() for p in (root / "python" / "mmlab").glob("*.py"))
    for newest in ("trial_inputs", "energy_j", "latency_ms", "bound_ms", "layout_ms"):  # schemas 9 and 8
        assert newest not in text


def run_options(bin_dir):
    """`mmlab run --help`'s options: {name: its default, or None for a flag}."""
    import re
    text = subprocess.run([str(bin_dir / "mmlab"), "run", "--help"], capture_output=True, text=True).stdout
    out = {}
    for m in re.finditer(r"^  --([a-z0-9_.-]+)( arg)?", text, re.M):
        name, takes = m.group(1), m.group(2)
        block = text[m.end():].split("\n  --")[0]
        default = re.search(r"default ([^ )]+)\)", " ".join(block.split()))
        out[name] = None if not takes else default.group(1) if default else ""
    return out


def test_every_option_of_the_program_is_a_keyword(bin_dir):
    """Issue #64: the keywords are the program's options, read by the same table: each option `mmlab run
    --help` lists is a key of mmlab.run's plan with its default value (a flag: true), with no list of
    options in python/; one it does not list is refused with the program's message."""
    options = run_options(bin_dir)
    assert {"seed", "order", "l2-flush", "stop-after", "dry-run", "trials"} <= set(options)
    skip = {"help", "plugin", "output", "resume", "overwrite"}  # no value to try, or a file to name
    tried = 0
    for name, default in options.items():
        if name in skip or default in ("", "results/<experiment>.csv"):
            continue
        plan = mmlab._lib.Plan(mmlab._lib.Lab())
        plan.set("algorithms", "eigen")
        plan.set(name.replace("-", "_"), "true" if default is None else default)
        tried += 1
    assert tried > 100  # the run options and every algorithm's axes
    with pytest.raises(ValueError, match="unknown option '--no_such_option'"):
        mmlab._lib.Plan(mmlab._lib.Lab()).set("no_such_option", "1")


def test_an_option_python_never_names_reaches_the_rows(root):
    """Issue #64: options python/ has no word for reach the run (seed, order, l2_flush here)."""
    r = mmlab.run(algorithms=["eigen"], shapes=[(12, 8, 4)], trials=3, seed=77, order="sequential",
                  l2_flush="off,on")
    assert r.rows["seed"].astype(str).tolist() == ["77", "77"]
    assert set(r.ok()["order"]) == {"sequential"} and set(r.rows["l2_flush"]) == {"off", "on"}
    text = "".join(p.read_text() for p in (root / "python" / "mmlab").glob("*.py"))
    assert "l2_flush" not in text and "sequential" not in text


def test_a_lab_of_its_own_does_not_see_the_process_labs_algorithms():
    @mmlab.algorithm("py_only_in_the_process_lab", backend="host")
    def only_here(a, b, c, *, params, stream):
        c[:] = a @ b

    own = mmlab._lib.Lab(new=True)
    with pytest.raises(ValueError, match="py_only_in_the_process_lab"):
        mmlab._lib.Plan(own).set("algorithms", "py_only_in_the_process_lab")
    mmlab._lib.Plan(mmlab._lib.Lab()).set("algorithms", "py_only_in_the_process_lab")
    del own


def cli_error(bin_dir, *args):
    p = subprocess.run([str(bin_dir / "mmlab"), "run", *args], capture_output=True, text=True)
    assert p.returncode == 2
    return p.stderr.strip().removeprefix("mmlab: error: ")


@pytest.mark.parametrize("keys,cli", [
    ({"algorithms": ["no_such_algorithm"]}, ["--algorithms", "no_such_algorithm"]),
    ({"shapes": "12x"}, ["--shape", "12x"]),
    ({"trials": 0}, ["--trials", "0"]),
    ({"inputs": ["exp_spread:99"]}, ["--inputs", "exp_spread:99"]),
])
def test_bad_arguments_raise_value_error_with_the_programs_message(tmp_path, bin_dir, keys, cli):
    with pytest.raises(ValueError) as e:
        mmlab.run(output=tmp_path / "x.csv", **keys)
    # the same message (a list of valid names also holds the algorithms registered from Python here)
    message = cli_error(bin_dir, *cli, "--output", str(tmp_path / "x.csv"))
    assert str(e.value) == message or str(e.value).startswith(message.rstrip(")") + ", ")
    assert not (tmp_path / "x.csv").exists()


def test_bad_algorithm_descriptions_raise_value_error():
    with pytest.raises(ValueError, match="already built in"):
        mmlab.algorithm("eigen", backend="host")(lambda a, b, c, *, params, stream: None)
    with pytest.raises(ValueError, match="lowercase"):
        mmlab.algorithm("Bad-Name", backend="host")(lambda a, b, c, *, params, stream: None)
    with pytest.raises(ValueError, match="backend"):
        mmlab.algorithm("fine_name", backend="fpga")(lambda a, b, c, *, params, stream: None)


def committed_csvs(root):
    return sorted(p for p in (root / "data").rglob("*.csv"))


_frames_read = {}


def read_once(path):
    """mmlab.read(path), each committed file read once for the tests over the whole of data/ (the
    reading is what the first of them checks; the second compares the same frames with mmlab-analyze)."""
    if path not in _frames_read:
        _frames_read[path] = mmlab.read(path)
    return _frames_read[path]


def test_read_every_committed_csv(root):
    files = committed_csvs(root)
    assert len(files) > 50
    schema = [c["name"] for c in mmlab._lib.schema()["results"]]
    domains = {c["name"]: c["values"] for c in mmlab._lib.schema()["results"] if c["type"] == "choice"}
    results = 0
    for path in files:
        r = read_once(path)
        assert len(r.rows.columns) > 0, path
        if "median_ms" in r.rows.columns and "schema" in r.rows.columns:
            assert r.rows["median_ms"].dtype == np.float64, path
            assert str(r.rows["m"].dtype) in ("Int64", "float64"), path
            assert isinstance(r.rows["status"].dtype, pd.CategoricalDtype), path
            assert str(r.rows["schema"].dtype) == "Int64", path
            if "verified" in r.rows.columns:
                assert str(r.rows["verified"].dtype) in ("Int64", "float64"), path
        if mmlab._frames._results_file(path):
            # Every results file, of every schema version, read by the lab's one reader: this schema's
            # columns, older files upgraded as mmlab-analyze upgrades them (issue #63).
            results += 1
            assert list(r.rows.columns) == schema, path
            assert str(r.rows["verified"].dtype) == "Int64", path
            assert (r.rows["verified"] == 1).sum() <= (r.rows["status"] != "skipped").sum(), path
            for c in ("scope", "timer", "status", "order", "l2_flush", "precision"):  # the schema's domains
                assert list(r.rows[c].cat.categories) == domains[c], (path, c)
    assert results >= 366


def test_read_is_the_frame_of_mmlab_analyze_rows(root, bin_dir):
    # mmlab.read's frame holds the records `mmlab-analyze rows --format json` prints for the same file,
    # every column typed as that output says (every committed results file, of every schema).
    files = [p for p in committed_csvs(root) if mmlab._frames._results_file(p)]
    assert len(files) > 400
    for path in files:
        out = subprocess.run([str(bin_dir / "mmlab-analyze"), "rows", "--format", "json", str(path)],
                             capture_output=True, text=True, check=True)
        document = json.loads(out.stdout)
        frame = read_once(path).rows
        assert list(frame.columns) == [c["name"] for c in document["columns"]], path
        assert len(frame) == len(document["records"]), path
        for column in document["columns"]:
            name, kind = column["name"], column["type"]
            want = [r[name] for r in document["records"]]
            got = frame[name].tolist()
            if kind in ("whole", "number"):
                got = [None if pd.isna(v) else float(v) for v in got]
                want = [None if v is None else float(v) for v in want]
            elif kind == "choice":
                got = ["" if pd.isna(v) else v for v in got]
            assert got == want, (path, name)


def test_read_rejects_a_torn_row_as_mmlab_analyze_does(root, tmp_path, bin_dir):
    text = (root / "data" / "quick" / "quick.csv").read_text()
    torn = tmp_path / "torn.csv"
    torn.write_text(text.rstrip("\n")[:-40] + "\n")  # the last row cut short, as a kill mid-write leaves it
    analyze = subprocess.run([str(bin_dir / "mmlab-analyze"), "rows", str(torn)], capture_output=True, text=True)
    assert analyze.returncode != 0
    with pytest.raises((ValueError, mmlab._lib.CommandError)) as e:
        mmlab.read(torn)
    assert str(torn) in str(e.value)


def analyze_json(bin_dir, *args):
    p = subprocess.run([str(bin_dir / "mmlab-analyze"), "compare", *args, "--format", "json"], capture_output=True,
                       text=True, check=True)
    return json.loads(p.stdout)["records"]


def same(a, b):
    if a is None or (isinstance(a, float) and math.isnan(a)) or a is pd.NA:
        return b is None
    if isinstance(b, float):
        return float(a) == b
    return a == b or str(a) == str(b)


@pytest.mark.parametrize("file,baseline,across", [
    ("data/quick/quick.csv", "cublas", False),
    ("data/flagship/regret/measured/measured1.csv", "cublas", False),
])
def test_compare_equals_mmlab_analyze(root, bin_dir, file, baseline, across):
    frame = mmlab.compare(root / file, baseline=baseline, across_runs=across)
    records = analyze_json(bin_dir, str(root / file), "--baseline", baseline, *(["--across-runs"] if across else []))
    assert len(frame) == len(records) > 0
    assert {"speedup", "ci_lo", "ci_hi", "p", "p_holm", "verdict", "trials_to_decide"} <= set(frame.columns)
    assert isinstance(frame["verdict"].dtype, pd.CategoricalDtype) and frame["speedup"].dtype == np.float64
    # typed as the analysis declares its fields (its JSON's "columns"), no list of them in Python
    assert str(frame["m"].dtype) == "Int64" and isinstance(frame["scope"].dtype, pd.CategoricalDtype)
    for row, rec in zip(frame.to_dict("records"), records):
        for key, value in rec.items():
            assert same(row[key], value), (key, row[key], value)


def test_compare_across_runs_equals_mmlab_analyze(root, bin_dir):
    files = [root / "data/flagship/regret/measured/measured1.csv", root / "data/flagship/regret/measured/measured2.csv"]
    frame = mmlab.compare([mmlab.read(files[0]), files[1]], baseline="cublas", across_runs=True)
    records = analyze_json(bin_dir, *map(str, files), "--baseline", "cublas", "--across-runs")
    assert len(frame) == len(records) > 0 and "runs_to_decide" in frame.columns
    for row, rec in zip(frame.to_dict("records"), records):
        for key, value in rec.items():
            assert same(row[key], value), (key, row[key], value)


def test_compare_options_reach_the_analysis_as_values(root, bin_dir):
    """Issue #82: compare's options go to the library as mmlab_compare_options (no command line); the
    figures are those of `mmlab-analyze compare` with the same options as flags; a bad value or an unknown
    key is an error."""
    file = str(root / "data/quick/quick.csv")
    frame = mmlab.compare(file, baseline="cublas", margin=0.05, level=0.9, resamples=500, seed=7,
                          family="table", sizes=[1024, "2048"], bad_samples="leave_out")
    records = analyze_json(bin_dir, file, "--baseline", "cublas", "--margin", "0.05", "--level", "0.9",
                           "--resamples", "500", "--seed", "7", "--family", "table", "--size", "1024,2048",
                           "--bad-samples", "leave-out")
    assert len(frame) == len(records) > 0
    assert set(frame["m"]) <= {1024, 2048}
    for row, rec in zip(frame.to_dict("records"), records):
        for key, value in rec.items():
            assert same(row[key], value), (key, row[key], value)
    # one size as a number or text, or several in a list: the same filter
    for sizes in (1024, "1024", [1024]):
        assert set(mmlab.compare(file, baseline="cublas", sizes=sizes)["m"]) == {1024}
    with pytest.raises(ValueError, match="--metric 'fastest'"):
        mmlab.compare(file, baseline="cublas", metric="fastest")
    with pytest.raises(ValueError, match="--size '12x'"):
        mmlab.compare(file, baseline="cublas", sizes=["12x"])
    with pytest.raises(TypeError, match="no option 'scope'"):
        mmlab.compare(file, baseline="cublas", scope="kernel")


def test_a_samples_file_or_another_table_reads_without_a_command_or_a_file(root, tmp_path, monkeypatch):
    """Issue #82: mmlab.read of a lone samples file or another program's table takes the table from the
    library (mmlab_read_table), typed by the samples schema or as text: no command line, no temporary file."""
    made = no_temporary_files(tmp_path, monkeypatch)
    samples = mmlab.read(root / "data" / "quick" / "quick.samples.csv").rows
    assert len(samples) > 0 and samples["ms"].dtype == np.float64 and str(samples["trial"].dtype) == "Int64"
    (tmp_path / "other.csv").write_text("name,count\nx,3\ny,4\n")
    other = mmlab.read(tmp_path / "other.csv").rows
    assert other["name"].tolist() == ["x", "y"] and other["count"].tolist() == [3, 4]
    (tmp_path / "bad.samples.csv").write_text("run_id,trial,ms\nr-0,0,fast\n")
    with pytest.raises(ValueError, match="row 1, column 'ms': 'fast' is not a number"):
        mmlab.read(tmp_path / "bad.samples.csv")
    assert not made


def test_compare_takes_the_analysis_tables_without_a_file(root, tmp_path, monkeypatch):
    """Issue #64: the analysis hands its tables back as typed records (mmlab_analyze_tables): compare
    writes and reads no file of its own, and prints nothing on standard output."""
    made = no_temporary_files(tmp_path, monkeypatch)
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    frame = mmlab.compare(root / "data/quick/quick.csv", baseline="cublas")
    assert len(frame) > 0 and frame.attrs["title"]
    assert not made and not list((tmp_path / "cwd").iterdir()) and not list((tmp_path / "temp").iterdir())
    tables = mmlab._lib.analyze_tables(["compare", str(root / "data/quick/quick.csv"), "--baseline", "cublas"])
    assert len(tables) == 1 and "verdict" in tables[0]["names"]
    assert dict(zip(tables[0]["names"], tables[0]["types"]))["verdict"] == "choice"


def test_compare_of_a_run_without_output_reads_the_kept_rows_not_a_file(tmp_path, monkeypatch):
    """Issue #82: a run made without output= is compared from the rows the library kept of it (the text its
    files would hold, mmlab_run_kept), with no file written or read; the figures are those of the same rows
    written to a file; the kept rows go with the Results."""
    import gc
    made = no_temporary_files(tmp_path, monkeypatch)
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    r = mmlab.run(algorithms=["eigen"], eigen__threads=[1, 2], shapes=[(48, 40, 56)], trials=5, warmup=0)
    frame = mmlab.compare(r, baseline="eigen:default:threads=1")
    assert len(frame) == 1 and frame["speedup"].iloc[0] > 0
    assert not made and not list((tmp_path / "cwd").iterdir()) and not list((tmp_path / "temp").iterdir())
    kept = r._kept
    assert kept and kept.endswith(".csv") and not (tmp_path / "cwd" / kept).exists()
    rows, samples = mmlab._lib.read(kept)  # the lab's reader takes the kept name for a file
    assert len(rows) == 2 and len(samples) == 10
    written = mmlab.compare(r.file(), baseline="eigen:default:threads=1")  # the same rows, from a file
    pd.testing.assert_frame_equal(frame, written)
    del r
    gc.collect()
    with pytest.raises(ValueError):
        mmlab._lib.read(kept)  # dropped with its Results


def test_compare_bad_baseline_is_a_value_error(root):
    with pytest.raises(ValueError):
        mmlab.compare(root / "data/quick/quick.csv", baseline="no_such_algorithm")


def test_a_plain_pip_install_carries_the_library(root, tmp_path):
    # pip install ./python (not editable) after the build, then the package from elsewhere, with no
    # MMLAB_LIBRARY: it loads the library the build copied beside it. (The copy has no lab beside it to
    # build from: where this tree's build made no library there, the backend refuses, and so the test
    # needs one; .ci/run installs from the clean clone itself.)
    import os
    import shutil
    import sys
    if not list((root / "python" / "mmlab" / "_lib").glob("libmmlab_lab.so*")):
        pytest.skip("no library beside the package (the build copies it there)")
    source, target = tmp_path / "python", tmp_path / "site"  # a copy: setuptools builds in the source tree
    shutil.copytree(root / "python", source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "--target", str(target), str(source)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "MMLAB_LIBRARY"}
    env["PYTHONPATH"] = str(target)
    out = subprocess.run([sys.executable, "-c", "import mmlab; print(mmlab._lib.library().path); "
                          "print(len(mmlab.algorithms()))"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[0] == str(target / "mmlab" / "_lib" / "libmmlab_lab.so") and int(out[1]) > 20


def test_no_csv_is_parsed_in_the_package(root):
    # Every frame comes from the lab's readers (`mmlab-analyze rows` for results, `records` for samples
    # and other tables), through the library: the package parses no CSV itself.
    for f in sorted((root / "python" / "mmlab").glob("*.py")):
        text = f.read_text()
        assert "read_csv" not in text and "csv.reader" not in text and "DictReader" not in text, f


def test_a_samples_cell_that_is_not_a_number_is_an_error(root, tmp_path):
    lines = (root / "data" / "quick" / "quick.samples.csv").read_text().splitlines()
    header, first = lines[0], lines[1].split(",")
    first[header.split(",").index("ms")] = "fast"
    bad = tmp_path / "bad.samples.csv"
    bad.write_text("\n".join([header, ",".join(first)] + lines[2:]) + "\n")
    with pytest.raises((ValueError, mmlab._lib.CommandError)) as e:
        mmlab.read(bad)
    assert "not a number" in str(e.value) and "'ms'" in str(e.value)
    frame = mmlab.read(root / "data" / "quick" / "quick.samples.csv").rows
    assert str(frame["trial"].dtype) == "Int64" and str(frame["ms"].dtype) == "float64"


def test_a_lab_of_its_own_holds_its_algorithms(tmp_path):
    """Issue #80: mmlab.Lab is public; an algorithm added to it runs there and is unknown to the process's
    lab (and to another Lab)."""
    lab = mmlab.Lab()

    @lab.algorithm("np_own_lab", backend="host")
    def own(a, b, c, *, params, stream):
        c[:] = a @ b

    r = lab.run(algorithms=[own, "eigen"], shapes=[(33, 21, 17)], trials=2, warmup=0)
    assert set(r.rows["algorithm"]) == {"np_own_lab", "eigen"}
    assert set(r.rows["status"]) == {"ok"}
    for other in (None, mmlab.Lab()):
        with pytest.raises(ValueError, match="np_own_lab"):
            mmlab.run(algorithms=["np_own_lab"], shapes=[(8, 8, 8)], trials=1, lab=other)
    assert isinstance(mmlab.Lab.default(), mmlab.Lab)


def test_a_plan_is_set_key_by_key_and_run():
    """Issue #80: mmlab.Plan is public: keys checked as they are set (ValueError), run when asked."""
    plan = mmlab.Plan(algorithms=["eigen"], shapes=[(20, 10, 30)])
    plan.set("trials", 2).set(warmup=0)
    with pytest.raises(ValueError, match="trials"):
        plan.set(trials="many")
    r = plan.run()
    assert list(r.rows["status"]) == ["ok"] and int(r.rows["trials"].iloc[0]) == 2
    assert list(mmlab.Lab().plan(algorithms=["eigen"], shapes=[(5, 5, 5)], trials=1).run().rows["status"]) == ["ok"]


def test_exit_statuses_are_the_headers(root):
    """The package's exit statuses are include/mmlab/lab.h's, written there once."""
    import re
    header = (root / "include" / "mmlab" / "lab.h").read_text()
    found = dict(re.findall(r"MMLAB_(DONE|FAILED|BAD_INPUT|NOT_WRITTEN|INTERRUPTED) = (\d+)", header))
    assert {k: int(v) for k, v in found.items()} == {
        "DONE": mmlab._lib.DONE, "FAILED": mmlab._lib.FAILED, "BAD_INPUT": mmlab._lib.BAD_INPUT,
        "NOT_WRITTEN": mmlab._lib.NOT_WRITTEN, "INTERRUPTED": mmlab._lib.INTERRUPTED}


def test_plugin_constants_are_the_headers(root):
    """The plugin ABI's numbers the package describes Python algorithms with are include/mmlab/plugin.h's."""
    import re
    from mmlab import _algorithm
    header = (root / "include" / "mmlab" / "plugin.h").read_text()
    assert int(re.search(r"#define MMLAB_PLUGIN_ABI_VERSION (\d+)", header).group(1)) == _algorithm._ABI_VERSION
    backends = {k.lower(): int(v) for k, v in re.findall(r"MMLAB_BACKEND_(DEVICE|HOST) = (\d+)", header)}
    assert backends == {"device": _algorithm._BACKENDS["gpu"], "host": _algorithm._BACKENDS["host"]}
    kinds = {k.lower(): int(v) for k, v in re.findall(r"MMLAB_AXIS_(INTEGER|SHAPE|CHOICE) = (\d+)", header)}
    assert kinds == _algorithm._KINDS


def test_version_and_catalog_come_without_a_file_or_argv(monkeypatch, bin_dir):
    """Issue #82: mmlab.version() and mmlab.algorithms() through typed C calls (mmlab_version,
    mmlab_catalog), no command line and no temporary file for its standard output."""
    import tempfile

    def refuse(*args, **kwargs):
        raise AssertionError("a temporary file")
    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    monkeypatch.setattr(mmlab._lib, "command", refuse)
    assert mmlab.version() == subprocess.run([str(bin_dir / "mmlab"), "--version"], capture_output=True,
                                             text=True).stdout.split()[-1]
    listed = mmlab.algorithms()
    assert {"eigen", "cublas", "flagship", "dist_cannon"} <= set(listed["algorithm"])


def test_a_lab_lists_its_own_algorithms():
    """Issue #82: a Lab's catalog is its own (mmlab_catalog of its handle): what lab.algorithm added is
    listed there and not in the process's."""
    lab = mmlab.Lab()

    @lab.algorithm("np_listed_in_its_lab", backend="host")
    def listed(a, b, c, *, params, stream):
        c[:] = a @ b

    mine = set(lab.algorithms()["algorithm"])
    assert "np_listed_in_its_lab" in mine and "eigen" in mine
    assert "np_listed_in_its_lab" not in set(mmlab.algorithms()["algorithm"])


def test_a_resolved_configuration_is_read_by_the_labs_own_reader(monkeypatch):
    """Issue #82: a row's `resolved` text read back by core's reader (mmlab_read_params, by the algorithm's
    axes): the flagship's pick, itself a configuration holding ';', comes whole; no command line runs."""
    monkeypatch.setattr(mmlab._lib, "command", lambda *a, **k: (_ for _ in ()).throw(AssertionError("argv")))
    text = "kernel=tf32x3:half3:stages=3;split=4;choice=measured;launch=graph"
    assert mmlab.read_params("flagship", text) == {"kernel": "tf32x3:half3:stages=3;split=4",
                                                   "choice": "measured", "launch": "graph"}
    assert mmlab.read_params("small", "tile=64x64;thread=8x4;split=2") == {"tile": "64x64", "thread": "8x4",
                                                                          "split": "2"}
    with pytest.raises(ValueError, match="no algorithm"):
        mmlab.read_params("no_such_algorithm", "a=1")


def test_axis_kinds_come_from_the_values_types(tmp_path):
    """Issue #82: an axis's kind from its values' Python types (ints, pairs of ints, text), not guessed from
    their text; the run hands back ints and tuples."""
    lab = mmlab.Lab()
    seen = []

    @lab.algorithm("np_kinds", backend="host", axes={"blocks": [1, 2], "tile": [(4, 2)], "mode": ["16x16"]})
    def kinds(a, b, c, *, params, stream):
        seen.append((params["blocks"], params["tile"], params["mode"]))
        c[:] = a @ b

    assert kinds.axes["blocks"]["kind"] == "integer" and kinds.axes["tile"]["kind"] == "shape"
    assert kinds.axes["mode"]["kind"] == "choice"  # text stays text, whatever it looks like
    r = lab.run(algorithms=[kinds], shapes=[(9, 7, 5)], trials=2)
    assert list(r.rows["status"]) == ["ok"], r.rows["reason"].tolist()
    assert seen and all(s == (1, (4, 2), "16x16") for s in seen)
