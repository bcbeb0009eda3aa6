"""The Python package's tests run against this checkout's build (build/bin, or $MMLAB_BIN)."""
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("MMLAB_BIN", ROOT / "build" / "bin"))
os.environ.setdefault("MMLAB_LIBRARY", str(BIN / "libmmlab_lab.so"))
sys.path.insert(0, str(ROOT / "python"))  # the package of this checkout, installed or not


@pytest.fixture
def root():
    return ROOT


@pytest.fixture
def bin_dir():
    return BIN
