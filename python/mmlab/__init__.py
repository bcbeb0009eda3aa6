"""mmlab from Python: the lab's sweeps, files and statistics as DataFrames, and Python kernels
(Triton, CuPy, PyTorch, numba, numpy) as lab algorithms.

    import mmlab
    mmlab.algorithms()                                   # what the lab can run
    r = mmlab.run(algorithms=["cublas", "flagship"], shapes=[(4096, 4096, 4096)], trials=10)
    r.rows, r.samples                                    # typed DataFrames
    mmlab.compare(r, baseline="cublas")                  # ratios, intervals, verdicts

Everything runs in the lab's own libraries (libmmlab_lab.so, the C API of include/mmlab/lab.h): the
same harness, checks, messages and statistics as the `mmlab` and `mmlab-analyze` programs. A run's
rows come back from the library as they finish, typed by the lab's schema: no file is written unless
`output=` asks for one.
"""

import pandas as pd

from . import _frames, _lib
from ._algorithm import Algorithm, algorithm
from ._arrays import DeviceArray
from ._lib import CommandError
from ._results import Results, read

__all__ = ["algorithms", "run", "read", "compare", "algorithm", "Algorithm", "Lab", "Plan", "Results", "DeviceArray",
           "Interrupted", "CommandError", "version", "read_params"]


def version():
    """The git revision the lab's library was built from."""
    return _lib.version()


def read_params(algorithm, text, lab=None):
    """A configuration's text as a row's `params` or `resolved` holds it, read by the algorithm's axes (the
    lab's own reader, so a value that is itself a configuration, the flagship's `kernel`, comes whole):
    {axis: value}. mmlab.read_params("flagship", row["resolved"])["kernel"] is the kernel a flagship row ran."""
    return _lib.read_params(algorithm, text, lab._handle if lab is not None else None)


def algorithms(lab=None):
    """A row per algorithm and variant of the process's lab (or `lab`'s): backend, summaries, whether it is
    deterministic or run only on request, its axes ({axis: values swept by `all`}) and their defaults, its
    limits and source."""
    listed = _lib.catalog(lab._handle if lab is not None else None)
    rows = []
    for a in listed:
        for v in a["variants"]:
            axes = [x for x in a["axes"] if not x["variants"] or v["name"] in x["variants"]]
            rows.append({"algorithm": a["name"], "variant": v["name"], "backend": a["backend"],
                         "summary": a["summary"], "variant_summary": v["summary"], "on_request": v["on_request"],
                         "deterministic": v["deterministic"], "axes": {x["name"]: x["values"] for x in axes},
                         "defaults": {x["name"]: x["default"] for x in axes}, "constraints": a["constraints"],
                         "source": a["source"]})
    frame = pd.DataFrame(rows)
    frame["backend"] = frame["backend"].astype("category")
    return frame


_ALIASES = {"shapes": "shape", "sizes": "size", "variants": "variant", "plugins": "plugin"}


def _value(v):
    if isinstance(v, Algorithm):
        return v.name
    if isinstance(v, tuple):
        return "x".join(str(int(x)) for x in v)
    if isinstance(v, (list, set)):
        return ",".join(_value(x) for x in v)
    return str(v)


def _keywords(keys):
    """(option, value) pairs for the lab's plan: a key's underscores are the option's dashes (the lab reads
    them alike), `alg__axis` is `alg.axis`; lists and shapes as the command line writes them."""
    out = []
    for key, value in keys.items():
        if value is None:
            continue
        option = key.replace("__", ".") if "." in key or "__" in key else _ALIASES.get(key, key)
        out.append((option, "true" if value is True else "false" if value is False else _value(value)))
    return out


class Lab:
    """A lab of its own: its algorithms (what `lab.algorithm` adds, beside the built-in ones) and its runs,
    apart from the process's lab (the one mmlab.run and mmlab.algorithm use) and freed with the object.

        lab = mmlab.Lab()
        @lab.algorithm("np_matmul", backend="host")
        def np_matmul(a, b, c, *, params, stream): ...
        lab.run(algorithms=[np_matmul, "eigen"], shapes=[(512, 512, 512)])
    """

    def __init__(self, *, _handle=None):
        self._handle = _handle or _lib.Lab(new=True)
        self._algorithms = []  # what lab.algorithm added: kept as long as the lab

    @classmethod
    def default(cls):
        """The process's lab: what mmlab.run and mmlab.algorithm use."""
        return cls(_handle=_lib.Lab())

    def run(self, experiment=None, *, output=None, options=None, **keys):
        """mmlab.run in this lab."""
        return run(experiment, output=output, options=options, lab=self, **keys)

    def plan(self, experiment=None, **keys):
        """A mmlab.Plan of this lab."""
        return Plan(experiment, lab=self, **keys)

    def algorithm(self, name, backend="gpu", **options):
        """mmlab.algorithm, added to this lab only."""
        return algorithm(name, backend, lab=self, **options)

    def algorithms(self):
        """mmlab.algorithms of this lab: the built-in ones and what lab.algorithm added."""
        return algorithms(lab=self)


class Plan:
    """A plan of a lab: an experiment file (or none) and keys, each checked as it is set (ValueError with the
    lab's message), run when asked; mmlab.run(...) is Plan(...).run().

        plan = mmlab.Plan(algorithms=["cublas"], sizes=[1024])
        plan.set("trials", 20)                 # or plan.set(trials=20)
        r = plan.run()
    """

    def __init__(self, experiment=None, *, output=None, options=None, lab=None, **keys):
        self.lab = lab
        self.output = output
        self._plan = _lib.Plan(lab._handle if lab is not None else _lib.Lab(), experiment)
        if output is not None:  # first: keys such as resume are checked against it
            self._plan.set("output", str(output))
        self.set(options=options, **keys)

    def set(self, key=None, value=None, *, options=None, **keys):
        """Sets keys as mmlab.run takes them (`set("trials", 20)`, `set(trials=20)`, `set(options={"alg.axis": v})`)."""
        if key is not None:
            keys = dict(keys, **{key: value})
        for option, text in _keywords(keys) + _keywords(dict(options or {})):
            if option == "output":
                self.output = text
            self._plan.set(option, text)
        return self

    def run(self):
        """Runs the plan: its Results (see mmlab.run)."""
        output = self.output
        status, rows, samples, kept = _lib.run(self._plan)
        if output is not None:  # the file asked for, every row it holds (this run's appended to any before)
            _lib.free_kept(kept)
            results = Results(output)
        else:
            results = Results(rows=_frames.frame(rows), samples=_frames.frame(samples, samples=True), kept=kept)
        if _lib.interrupted():
            raise Interrupted("mmlab.run: stopped; the rows finished before it are the exception's .results" +
                              (f" (and in {output}: resume=True goes on)" if output else ""), results)
        return results


def run(experiment=None, *, output=None, options=None, lab=None, **keys):
    """Sweeps, verifies and times as `mmlab run` does, with its options as keys: `mmlab.run("experiments/quick.ini")`,
    or algorithms=[names or mmlab.algorithm objects], shapes=[(m, n, k)], sizes=[n], inputs=, trials=,
    scope=, ... (any option of `mmlab run --help`, its dashes as underscores; `alg__axis=` or
    options={"alg.axis": ...} for an algorithm's axis). Progress shows as the program shows it.

    output: a CSV to append the rows to (its samples beside it) as the program does, and the Results read
    from it (every row it holds); without one no file is written or read (an experiment file's own
    `output` is then not used) and the Results are this run's rows as the library handed them over. Bad arguments raise
    ValueError with the lab's message; failed rows are rows (status 'failed', the reason), not errors;
    Ctrl-C stops after the configuration it is in and raises mmlab.Interrupted (a KeyboardInterrupt) whose
    `results` are the rows finished before it (the file's, with output=; `resume=True` then goes on).
    lab: a mmlab.Lab to run in (its algorithms); the process's lab by default."""
    return Plan(experiment, output=output, options=options, lab=lab, **keys).run()


class Interrupted(KeyboardInterrupt):
    """mmlab.run stopped by Ctrl-C (or SIGTERM) after the configuration it was in: `results` holds the rows
    finished before it, as mmlab.run would have returned them."""

    def __init__(self, message, results):
        super().__init__(message)
        self.results = results


def _paths(results):
    if isinstance(results, (list, tuple)):
        return [p for r in results for p in _paths(r)]
    return [str(results._source() if isinstance(results, Results) else results)]


_COMPARE_KEYS = {"size": "sizes", "sizes": "sizes", "run": "run", "level": "level", "resamples": "resamples",
                 "seed": "seed", "margin": "margin", "family": "family", "metric": "metric", "cycles": "cycles",
                 "baseline_scope": "baseline_scope", "bad_samples": "bad_samples"}


def compare(results, baseline, *, across_runs=False, **options):
    """`mmlab-analyze compare` on Results or CSV paths (one or a list): a row per configuration and
    problem against `baseline` ("cublas", "alg:variant[:params]", "best:cublas,cutlass"): speedup,
    ci_lo, ci_hi, p, p_holm, verdict, trials (or runs) to decide and the rest, numbers as numbers; the
    same figures `mmlab-analyze compare --format json` gives for the same files. across_runs=True
    combines the runs in the files (run to run variation). Other keys, the command's options as values:
    sizes (a list: "4096", (m, n, k)), run, level, resamples, seed, margin, family, metric, cycles,
    baseline_scope, bad_samples. The table's title and note are in .attrs. The options reach the library
    as a struct (mmlab_compare), not a command line, and its tables come back as typed records; nothing
    is written: Results of a run made without output= are read from the rows the library kept of it
    (mmlab_run_kept), not from a file."""
    values = {"baseline": _value(baseline), "across_runs": 1 if across_runs else 0}
    for key, value in options.items():
        if value is None:
            continue
        if key not in _COMPARE_KEYS:
            raise TypeError(f"compare: no option {key!r} (options: {', '.join(sorted(_COMPARE_KEYS))})")
        name = _COMPARE_KEYS[key]
        if name == "sizes":
            one = isinstance(value, (int, str)) or (isinstance(value, tuple) and all(isinstance(v, int) for v in value))
            value = [_value(v) for v in (value.split(",") if isinstance(value, str) else [value] if one else value)]
        elif name == "cycles":
            value = 1 if value else 0
        elif name == "bad_samples":
            value = str(value).replace("_", "-")
        values[name] = value
    tables = _lib.compare(_paths(results), values)  # the analysis' tables as records, typed by its declarations
    frames = [_frames.table_frame(t["names"], t["types"], t["rows"]) for t in tables]
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0] if frames else pd.DataFrame()
    title, note = [t["title"] for t in tables], [t["note"] for t in tables]
    frame.attrs["title"], frame.attrs["note"] = "\n".join(title), "\n".join(note)
    return frame
