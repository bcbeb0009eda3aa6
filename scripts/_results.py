"""Results files as core's reader reads them (`mmlab-analyze rows --format json`): every schema version
upgraded to this one, after the reader's checks, whole and decimal columns as numbers (None where a row has
none), the others as text. The scripts read results through this, never by hand (issue #82)."""
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ANALYZE = os.environ.get("MMLAB_ANALYZE", os.path.join(HERE, "..", "build", "bin", "mmlab-analyze"))


class NotResults(Exception):
    """A file the reader refuses (not a results file, or a malformed one): its message."""


def read(*paths, bad_samples="error"):
    """Every row of the files, in their order, as dicts keyed by column name."""
    if not paths:
        return []
    run = subprocess.run([ANALYZE, "rows", *map(str, paths), "--format", "json", "--bad-samples", bad_samples],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise NotResults(run.stderr.strip() or f"{ANALYZE} exited {run.returncode}")
    return json.loads(run.stdout)["records"]


def rows(*paths, bad_samples="error"):
    """As read(), a refused file ending the script with the reader's message (exit 2)."""
    try:
        return read(*paths, bad_samples=bad_samples)
    except NotResults as e:
        sys.exit(str(e))


_lab = None


def read_params(algorithm, text):
    """A configuration's text (a row's `params` or `resolved`) read by the lab's own reader, by the algorithm's
    axes: {axis: value}; a value that is itself a configuration (the flagship's `kernel`) comes whole. Through
    the package's loader of libmmlab_lab.so (python/mmlab/_lib.py; $MMLAB_LIBRARY, else this checkout's
    build/bin), without the package's pandas."""
    global _lab
    if _lab is None:
        spec = importlib.util.spec_from_file_location(
            "mmlab_lib", os.path.join(HERE, "..", "python", "mmlab", "_lib.py"))
        _lab = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_lab)
    return _lab.read_params(algorithm, text)
