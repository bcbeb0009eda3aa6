"""The Python package's build backend: setuptools', with the lab's library built first.

`pip install ./python` from a clean clone builds libmmlab_lab.so with the project's CMake (the
`release` preset: this machine's GPU architecture, or 90a where none is seen; the tree's build/) and
carries it into the wheel (mmlab/_lib/, where the CMake build copies it). A library already built there
is taken as it is. An editable install (`pip install -e python`, scripts/setup) builds nothing: the
package finds the library the build copies beside it. Needs what the lab's build needs (scripts/setup).
"""
import os
import pathlib
import subprocess

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
    if _library():
        return
    if not (_ROOT / "CMakePresets.json").is_file():
        raise RuntimeError(f"mmlab: no libmmlab_lab.so in {_LIB} and no lab to build it from ({_ROOT}): "
                           "install from the repository's python/ folder")
    jobs = str(os.cpu_count() or 2)
    for command in (["cmake", "--preset", "release"],
                    ["cmake", "--build", "--preset", "release", "--target", "mmlab_lab", "-j", jobs]):
        print("mmlab:", " ".join(command), flush=True)
        subprocess.run(command, cwd=_ROOT, check=True)
    if not _library():
        raise RuntimeError("mmlab: the build made no libmmlab_lab.so (it needs a shared Boost.Program_options "
                           "and the CUDA toolkit: scripts/setup)")


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _build_library()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
