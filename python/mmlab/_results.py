"""Results: a run's rows and samples as DataFrames, and where they came from."""
import pathlib

from . import _frames


class Results:
    """What a run wrote (or a CSV holds): `.rows` (a row per configuration, typed as the schema says),
    `.samples` (a row per trial, empty where the file has none) and `.path`, the CSV."""

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.rows = _frames.read_table(self.path)
        sp = _frames.samples_path(self.path)
        if sp is not None and sp.is_file() and "run_id" in self.rows.columns:
            self.samples = _frames.read_table(sp, samples=True)
        else:
            import pandas as pd
            self.samples = pd.DataFrame({"run_id": pd.Series(dtype=str), "trial": pd.Series(dtype="Int64"),
                                         "ms": pd.Series(dtype=float)})

    def ok(self):
        """The rows that verified and were timed."""
        return self.rows[self.rows["status"] == "ok"] if "status" in self.rows.columns else self.rows

    def __repr__(self):
        counts = self.rows["status"].value_counts().to_dict() if "status" in self.rows.columns else {}
        what = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or f"{len(self.rows)} rows"
        return f"<mmlab.Results {self.path}: {what}; {len(self.samples)} samples>"


def read(path):
    """A CSV of mmlab's (its samples beside it, `<name>.samples.csv`, where there are some) as Results;
    any other table under data/ as Results whose rows pandas typed (samples empty)."""
    path = pathlib.Path(path)
    if path.name.endswith(".samples.csv"):
        r = Results.__new__(Results)
        r.path, r.rows = path, _frames.read_table(path, samples=True)
        r.samples = r.rows
        return r
    return Results(path)
