"""libmmlab_lab.so through ctypes: mmlab's and mmlab-analyze's commands run in this process."""
import ctypes
import json
import os
import pathlib
import tempfile

API_VERSION = 1  # include/mmlab/lab.h's MMLAB_LAB_API_VERSION
_NAME = "libmmlab_lab.so"
_library = None


def _candidates():
    if os.environ.get("MMLAB_LIBRARY"):
        yield pathlib.Path(os.environ["MMLAB_LIBRARY"])
    here = pathlib.Path(__file__).resolve().parent
    yield here / "_lib" / _NAME
    for parent in here.parents:  # a checkout: python/mmlab -> the repository's build/bin
        yield parent / "build" / "bin" / _NAME


def library():
    """The loaded library (found at $MMLAB_LIBRARY, beside the package, or in the checkout's build/bin)."""
    global _library
    if _library is None:
        tried = []
        for path in _candidates():
            tried.append(str(path))
            if path.is_file():
                lib = ctypes.CDLL(str(path))
                break
        else:
            raise RuntimeError(
                "mmlab: no " + _NAME + " (build the lab first: `cmake --preset release && cmake --build --preset "
                "release`, or set MMLAB_LIBRARY); looked at " + ", ".join(tried))
        lib.mmlab_lab_api_version.restype = ctypes.c_int32
        if lib.mmlab_lab_api_version() != API_VERSION:
            raise RuntimeError(f"mmlab: {path} has C API {lib.mmlab_lab_api_version()}, this package {API_VERSION}")
        for name in ("mmlab_command", "mmlab_analyze"):
            fn = getattr(lib, name)
            fn.restype = ctypes.c_int32
            fn.argtypes = [ctypes.c_int32, ctypes.POINTER(ctypes.c_char_p), ctypes.c_char_p, ctypes.c_char_p,
                           ctypes.c_size_t]
        lib.mmlab_interrupted.restype = ctypes.c_int32
        lib.mmlab_schema_json.restype = ctypes.c_char_p
        lib.mmlab_layouts_json.restype = ctypes.c_char_p
        lib.mmlab_add_algorithms.restype = ctypes.c_int32
        lib.mmlab_add_algorithms.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                             ctypes.c_size_t]
        lib.path = path
        _library = lib
    return _library


class CommandError(RuntimeError):
    """A command that ended in a failure other than bad input (exit status 1 or 3)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def command(args, *, analyze=False, capture=False, check=True):
    """Runs `mmlab ARGS` (or `mmlab-analyze ARGS`) in this process: (status, standard output or None).

    Bad input (exit status 2) raises ValueError with the command's own message; with `check`, any other
    nonzero status raises CommandError."""
    lib = library()
    program = "mmlab-analyze" if analyze else "mmlab"
    argv = [program] + [str(a) for a in args]
    c_argv = (ctypes.c_char_p * len(argv))(*[a.encode() for a in argv])
    message = ctypes.create_string_buffer(4096)
    out_path = None
    try:
        if capture:
            fd, out_path = tempfile.mkstemp(prefix="mmlab-", suffix=".out")
            os.close(fd)
        fn = lib.mmlab_analyze if analyze else lib.mmlab_command
        status = fn(len(argv), c_argv, out_path.encode() if out_path else None, message, len(message))
        text = pathlib.Path(out_path).read_text() if out_path else None
    finally:
        if out_path:
            os.unlink(out_path)
    why = message.value.decode(errors="replace")
    if status == 2:
        raise ValueError(why or f"{program}: bad input")
    if check and status != 0:
        raise CommandError(why or f"{program} {' '.join(argv[1:])}: exit status {status}", status)
    return status, text


def interrupted():
    return bool(library().mmlab_interrupted())


def schema():
    """The CSV schema: {'version', 'results': [{'name', 'type', 'unit'} (a choice column also 'values', its
    domain, and 'open': whether a value may carry a parameter)], 'samples': [...]}."""
    return json.loads(library().mmlab_schema_json().decode())


def layouts():
    """The layouts of mmlab/plugin.h's structs as the library was compiled: {struct: {'size', 'fields':
    {field: offset}}}, what the package's ctypes declarations must match (a test checks them)."""
    return json.loads(library().mmlab_layouts_json().decode())
