"""CSV files into typed DataFrames: the schema's numbers as numbers, its choices as categories."""
import functools
import pathlib

import pandas as pd

from . import _lib


@functools.lru_cache(maxsize=1)
def _types():
    s = _lib.schema()
    return {c["name"]: c["type"] for c in s["results"]}, {c["name"]: c["type"] for c in s["samples"]}


def _typed(frame, types, where):
    for name in frame.columns:
        kind = types.get(name)
        text = frame[name]
        if kind in ("whole", "number"):
            numbers = pd.to_numeric(text.where(text != "", None), errors="coerce")
            bad = numbers.isna() & (text != "")
            if bad.any():
                raise ValueError(f"{where}: column '{name}' holds '{text[bad].iloc[0]}', not a number")
            frame[name] = numbers.astype("Int64") if kind == "whole" and (numbers.dropna() % 1 == 0).all() \
                else numbers.astype("float64")
        elif kind == "choice":
            frame[name] = text.where(text != "", None).astype("category")
        elif kind is None:  # a column the schema does not know (a table of another program): pandas' guess
            numbers = pd.to_numeric(text.where(text != "", None), errors="coerce")
            if not (numbers.isna() & (text != "")).any() and (text != "").any():
                frame[name] = numbers
    return frame


def read_table(path, samples=False):
    """One CSV as a typed DataFrame (the results schema, or the samples' with `samples`)."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    results, sample_types = _types()
    return _typed(frame, sample_types if samples else results, str(path))


def samples_path(path):
    path = pathlib.Path(path)
    return path.with_name(path.name[:-len(".csv")] + ".samples.csv") if path.name.endswith(".csv") else None
