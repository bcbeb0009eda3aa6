"""The Python package's build backend: setuptools', with the lab's library built first.

`pip install ./python` from a clean clone builds libmmlab_lab.so with the project's CMake (the
`release` preset: this machine's GPU architecture, or 90a where none is seen; the tree's build/), after
fetching the pinned PyPI dependencies as scripts/setup does (scripts/fetch-deps: CUTLASS's headers), and
carries it into the wheel (mmlab/_lib/, where the CMake build copies it). In a clone the build runs every
time (incremental), so the wheel's library is never older than its sources. An editable install (`pip install -e python`, scripts/setup) builds nothing: the
package finds the library the build copies beside it. Needs what the lab's build needs (scripts/setup).
"""
import os
import pathlib
import subprocess
import sys

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (  # noqa: F401  (the rest of the backend is setuptools')
    build_editable, build_sdist, get_requires_for_build_editable, get_requires_for_build_sdist,
    get_requires_for_build_wheel, prepare_metadata_for_build_editable, prepare_metadata_for_build_wheel)

_PACKAGE = pathlib.Path(__file__).resolve().parent
_ROOT = _PACKAGE.parent
_LIB = _PACKAGE / "mmlab" / "_lib"


def _library():
    return sorted(_LIB.glob("libmmlab_lab.so*"))


def _build_library():
    # In a clone, the build always runs (incremental: seconds when the library is up to date), so a wheel
    # never carries a library older than the sources beside it (after a `git pull`); elsewhere (an sdist
    # with the library in it) the library is taken as it is.
    if not (_ROOT / "CMakePresets.json").is_file():
        if _library():
            return
        raise RuntimeError(f"mmlab: no libmmlab_lab.so in {_LIB} and no lab to build it from ({_ROOT}): "
                           "install from the repository's python/ folder")
    jobs = str(os.cpu_count() or 2)
    # pip shows this only with -v (`pip install -v ./python`); the README says how long it takes.
    print(f"mmlab: building the lab's library on {jobs} cores (about 12-15 minutes on two)", file=sys.stderr, flush=True)
    fetch = _ROOT / "scripts" / "fetch-deps"  # CUTLASS's headers (the `cutlass` algorithm), as scripts/setup does
    if fetch.is_file():
        subprocess.run([str(fetch)], cwd=_ROOT, check=False)
    for command in (["cmake", "--preset", "release"],
                    ["cmake", "--build", "--preset", "release", "--target", "mmlab_lab", "-j", jobs]):
        print("mmlab:", " ".join(command), flush=True)
        subprocess.run(command, cwd=_ROOT, check=True)
    if not _library():
        raise RuntimeError("mmlab: the build made no libmmlab_lab.so (it needs a shared Boost.Program_options "
                           "and the CUDA toolkit: scripts/setup)")
    cache = _ROOT / "build" / "CMakeCache.txt"
    if cache.is_file() and "MMLAB_CUTLASS_BUILT:INTERNAL=OFF" in cache.read_text(errors="replace"):
        print("mmlab: built without CUTLASS's headers (no network for scripts/fetch-deps?): the `cutlass` "
              "algorithm says 'not built here'", file=sys.stderr, flush=True)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _build_library()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
