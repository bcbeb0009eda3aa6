"""The lab's rows into typed DataFrames: the schema's numbers as numbers, its choices as categories, the
columns the schema's (a column the lab adds reaches the frame with no change here). Rows come from the
library as typed records (no CSV parsed here): a run's through its sink, a results file's from core's
reader (mmlab_read: its checks, and older schemas upgraded to this one, as the analysis reads them), a
lone samples file or another program's table by mmlab_read_table, `mmlab-analyze records`' table (samples
typed by their schema; another table's cells as text, typed here as numbers where every cell is one)."""
import functools
import pathlib

import numpy as np
import pandas as pd

from . import _lib


@functools.lru_cache(maxsize=1)
def _types():
    s = _lib.schema()
    return {c["name"]: c["type"] for c in s["results"]}, {c["name"]: c["type"] for c in s["samples"]}


@functools.lru_cache(maxsize=1)
def _domains():
    """{choice column: its values} for the closed ones, as the lab's schema names them."""
    return {c["name"]: c["values"] for c in _lib.schema()["results"]
            if c["type"] == "choice" and not c.get("open", True)}


def _typed_fast(frame, name, kind):
    """A column of the reader's records typed without pandas' text operations: numbers (None where a row
    has none) as float64 or Int64, closed choices as the schema's categories. False where the column
    holds anything else (text in a number column, a value outside the domain), which _typed then
    reads cell by cell and names."""
    cells = frame[name].tolist()
    if kind in ("whole", "number"):
        if pd.api.types.infer_dtype(cells, skipna=True) not in ("floating", "integer", "mixed-integer-float", "empty"):
            return False
        numbers = pd.Series(np.asarray(cells, dtype=np.float64), index=frame.index)
        frame[name] = numbers.astype("Int64") if kind == "whole" and (numbers.dropna() % 1 == 0).all() \
            else numbers
        return True
    if kind == "choice":
        values = [None if v is None or v == "" else v for v in cells]
        domain = _domains().get(name)
        if domain is None:
            frame[name] = pd.Series(values, index=frame.index, dtype=object).astype("category")
            return True
        allowed = set(domain)
        if any(v is not None and v not in allowed for v in values):
            return False
        frame[name] = pd.Categorical(values, categories=domain)
        return True
    return False


def _typed(frame, types, where):
    """Each column as its schema types it: from text (a CSV's cells) or from the reader's records
    (numbers already, None where a row has none)."""
    for name in frame.columns:
        kind = types.get(name)
        if _typed_fast(frame, name, kind):
            continue
        text = frame[name]
        present = text.notna() & (text != "")
        if kind in ("whole", "number"):
            numbers = pd.to_numeric(text.where(present, None), errors="coerce")
            bad = numbers.isna() & present
            if bad.any():
                raise ValueError(f"{where}: column '{name}' holds '{text[bad].iloc[0]}', not a number")
            frame[name] = numbers.astype("Int64") if kind == "whole" and (numbers.dropna() % 1 == 0).all() \
                else numbers.astype("float64")
        elif kind == "choice" and name in _domains():  # the same categories in every file
            values = text.where(present, None)
            bad = values.notna() & ~values.isin(_domains()[name])
            if bad.any():
                raise ValueError(f"{where}: column '{name}' holds '{values[bad].iloc[0]}' "
                                 f"(valid: {', '.join(_domains()[name])})")
            frame[name] = pd.Categorical(values, categories=_domains()[name])
        elif kind == "choice":
            frame[name] = text.where(present, None).astype("category")
        elif kind is None:  # a column the schema does not know (a table of another program): numbers where all are
            numbers = pd.to_numeric(text.where(text != "", None), errors="coerce")
            if not (numbers.isna() & (text != "")).any() and (text != "").any():
                frame[name] = numbers
    return frame


def _results_file(path):
    """Whether the CSV's header is an mmlab results file's (of any schema version)."""
    with open(path, newline="", errors="replace") as f:
        names = f.readline().strip().split(",")
    return {"run_id", "algorithm", "status"} <= set(names)


def names(samples=False):
    """The schema's columns, in the order the library hands a row's cells."""
    return [c["name"] for c in _lib.schema()["samples" if samples else "results"]]


def frame(records, samples=False, where="mmlab"):
    """A table's rows from the library (lists of cells in the schema's column order) as a typed DataFrame."""
    columns = names(samples)
    results, sample_types = _types()
    types = sample_types if samples else results
    data = {n: pd.Series([("" if r[i] is None else r[i]) if types.get(n) == "text" else r[i] for r in records],
                         dtype=object) for i, n in enumerate(columns)}  # text: "" where a row has none
    return _typed(pd.DataFrame(data, columns=columns), types, where)


def read_results(path):
    """A results file (its samples file's rows beside it) as two typed DataFrames, by core's reader."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    rows, samples = _lib.read(path)
    return frame(rows, where=str(path)), frame(samples, samples=True, where=str(samples_path(path)))


def read_table(path, samples=False):
    """One CSV as a typed DataFrame (the results schema, or the samples' with `samples`)."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    if not samples and _results_file(path):
        return read_results(path)[0]
    table = _lib.read_table(path)  # typed by the samples schema, or text: no command line, no file
    names, records = table["names"], table["rows"]
    frame = pd.DataFrame({n: pd.Series([r[i] for r in records], dtype=object) for i, n in enumerate(names)},
                         columns=names)
    results, sample_types = _types()
    return _typed(frame, sample_types if samples else results, str(path))


def samples_path(path):
    path = pathlib.Path(path)
    return path.with_name(path.name[:-len(".csv")] + ".samples.csv") if path.name.endswith(".csv") else None


def table_frame(names, types, rows):
    """One of the analysis' tables (mmlab_analyze_tables: its columns' names and declared types, its rows)
    as a DataFrame: choices as categories, whole numbers as Int64 where every value is one, flags as
    booleans, numbers as floats; a column it declares no type for as the records hold it."""
    frame = pd.DataFrame({n: pd.Series([r[i] for r in rows], dtype=object) for i, n in enumerate(names)},
                         columns=names)
    for name, kind in zip(names, types):
        cells = frame[name]
        if kind == "choice":
            frame[name] = cells.astype("category")
        elif kind == "flag" and cells.map(lambda v: v is None or isinstance(v, float)).all():
            frame[name] = cells.map(lambda v: None if v is None else bool(v)).astype("boolean")
        elif kind in ("whole", "number") and cells.map(lambda v: v is None or isinstance(v, float)).all():
            numbers = pd.to_numeric(cells).astype("float64")
            frame[name] = numbers.astype("Int64") if kind == "whole" and (numbers.dropna() % 1 == 0).all() \
                else numbers
        elif kind == "" and len(cells) and cells.map(lambda v: v is None or isinstance(v, float)).all():
            frame[name] = pd.to_numeric(cells).astype("float64")
    return frame
