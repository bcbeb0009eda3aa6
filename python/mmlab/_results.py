"""Results: a run's rows and samples as DataFrames, and where they came from."""
import csv
import math
import pathlib
import tempfile
import weakref

import pandas as pd

from . import _frames, _lib


class Results:
    """What a run made (or a CSV holds): `.rows` (a row per configuration, typed as the schema says),
    `.samples` (a row per trial, empty where there are none) and `.path`, the CSV (None for a run that
    wrote no file: mmlab.run without output=)."""

    def __init__(self, path=None, *, rows=None, samples=None, kept=None):
        self.path = pathlib.Path(path) if path is not None else None
        # A run made without output=: the name its rows and samples are kept under in the library (the text
        # its files would hold), which the lab's reader takes for a file's path; dropped with this object.
        self._kept = kept
        if kept is not None:
            weakref.finalize(self, _lib.free_kept, kept)
        if rows is None:
            sp = _frames.samples_path(self.path)
            if _frames._results_file(self.path):
                rows, samples = _frames.read_results(self.path)
            else:  # another program's table: its cells typed here
                rows = _frames.read_table(self.path)
            if sp is None or not sp.is_file() or "run_id" not in rows.columns:
                samples = None
        self.rows = rows
        self.samples = samples if samples is not None else _frames.frame([], samples=True)

    def ok(self):
        """The rows that verified and were timed."""
        return self.rows[self.rows["status"] == "ok"] if "status" in self.rows.columns else self.rows

    def file(self):
        """A CSV of these rows (and its samples beside it) for the lab's programs: `.path`, or for a run
        that wrote none a new one in a temporary folder, written once from the rows as the lab wrote them
        (numbers to the last bit)."""
        if self.path is None:
            self.path = pathlib.Path(tempfile.mkdtemp(prefix="mmlab-results-")) / "results.csv"
            _write(self.path, self.rows, _frames.names())
            _write(_frames.samples_path(self.path), self.samples, _frames.names(samples=True))
        return self.path

    def _source(self):
        """What the lab's reader reads these rows from: the file, or the rows the library kept of the run
        (no file written); a file written from the rows for Results made of rows alone."""
        return self.path or self._kept or self.file()

    def __repr__(self):
        counts = self.rows["status"].value_counts().to_dict() if "status" in self.rows.columns else {}
        what = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or f"{len(self.rows)} rows"
        return f"<mmlab.Results {self.path or 'in memory'}: {what}; {len(self.samples)} samples>"


def _cell(v):
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 2 ** 53 else repr(v)
    return str(v)


def _write(path, frame, columns):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for row in frame[columns].itertuples(index=False):
            w.writerow([_cell(v) for v in row])


def read(path):
    """A CSV of mmlab's (its samples beside it, `<name>.samples.csv`, where there are some) as Results;
    any other table under data/ as Results whose rows pandas typed (samples empty)."""
    path = pathlib.Path(path)
    if not path.is_file():  # the lab's words and error type, as for every other file it cannot read
        raise ValueError(f"{path}: " + ("a folder, not a results file" if path.is_dir() else "no such file"))
    if path.name.endswith(".samples.csv"):
        rows = _frames.read_table(path, samples=True)
        return Results(path, rows=rows, samples=rows)
    return Results(path)
