"""Results files as core's reader reads them (`mmlab-analyze rows --format json`): every schema version
upgraded to this one, after the reader's checks, whole and decimal columns as numbers (None where a row has
none), the others as text. The scripts read results through this, never by hand (issue #82)."""
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
