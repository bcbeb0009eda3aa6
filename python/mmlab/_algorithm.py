"""Python functions as lab algorithms: described with the plugin ABI (include/mmlab/plugin.h) in
memory, so the harness verifies, times and records them as it does a built-in."""
import contextlib
import ctypes
import hashlib
import inspect
import sys
import warnings

from . import _arrays, _lib

# include/mmlab/plugin.h's numbers (tests/python/test_package.py holds them to the header).
_ABI_VERSION = 2  # MMLAB_PLUGIN_ABI_VERSION
_BACKENDS = {"gpu": 0, "host": 1}
_KINDS = {"integer": 0, "shape": 1, "choice": 2}


class _Problem(ctypes.Structure):
    _fields_ = [("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64)]


class _Param(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_char_p), ("number", ctypes.c_int64 * 2)]


class _Params(ctypes.Structure):
    _fields_ = [("variant", ctypes.c_char_p), ("values", ctypes.POINTER(_Param)), ("count", ctypes.c_int32)]


class _Variant(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("summary", ctypes.c_char_p)]


class _Axis(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int), ("description", ctypes.c_char_p),
                ("default_value", ctypes.c_char_p), ("values", ctypes.POINTER(ctypes.c_char_p)),
                ("value_count", ctypes.c_int32)]


_SUPPORTS = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(_Problem), ctypes.POINTER(_Params), ctypes.c_void_p,
                             ctypes.c_size_t)
_RUN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(_Problem), ctypes.POINTER(_Params), ctypes.c_void_p,
                        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                        ctypes.c_size_t)


class _CAlgorithm(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("summary", ctypes.c_char_p), ("backend", ctypes.c_int),
                ("variants", ctypes.POINTER(_Variant)), ("variant_count", ctypes.c_int32),
                ("axes", ctypes.POINTER(_Axis)), ("axis_count", ctypes.c_int32), ("supports", _SUPPORTS),
                ("workspace_bytes", ctypes.c_void_p), ("run", _RUN)]


class _Info(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_int32), ("name", ctypes.c_char_p),
                ("algorithms", ctypes.POINTER(_CAlgorithm)), ("algorithm_count", ctypes.c_int32)]


def _failure(e):
    """A function's exception as its row's reason, with what to do where the cause is known."""
    text = f"{type(e).__name__}: {e}"
    if isinstance(e, AttributeError) and "row_stack" in str(e):
        import numpy
        text += (f" (numba-cuda calls numpy.row_stack, which this numpy, {numpy.__version__}, no longer has: "
                 "install a numpy that still has it, deprecated since 2.0, e.g. pip install 'numpy<2.4', "
                 "or a numba-cuda release that no longer calls it)")
    return text


def _write(buffer, size, text):
    data = text.encode(errors="replace")[: max(0, size - 1)] + b"\0"
    ctypes.memmove(buffer, data, len(data))


def _kind_of(values):
    """An axis's kind from its values' Python types, never from their text: ints are an integer axis,
    pairs of ints a shape, anything else a choice (a shape given as text, "64x64", says "kind": "shape")."""
    def whole(v):
        return isinstance(v, int) and not isinstance(v, bool)
    if values and all(whole(v) for v in values):
        return "integer"
    if values and all(isinstance(v, (tuple, list)) and len(v) == 2 and all(map(whole, v)) for v in values):
        return "shape"
    return "choice"


def _text(value):
    return "x".join(str(int(v)) for v in value) if isinstance(value, (tuple, list)) else str(value)


def _typed(kind, param):
    """A value as the lab handed it: an integer's and a shape's numbers (never their text read back), a
    choice's name."""
    if kind == "integer":
        return int(param.number[0])
    if kind == "shape":
        return (int(param.number[0]), int(param.number[1]))
    return param.value.decode()


# Frameworks' stream objects for the lab's stream, by handle (made once: each costs microseconds).
_external = {}


@contextlib.contextmanager
def _current_stream(handle):
    """The lab's stream as the current stream of torch and CuPy where they are loaded, so their
    ordinary calls (and Triton's launches, which take torch's) land on it. numba has no current stream:
    its kernels take the lab's explicitly (kernel[grid, block, numba.cuda.external_stream(stream)])."""
    with contextlib.ExitStack() as stack:
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            key = ("torch", handle)
            if key not in _external:
                _external[key] = torch.cuda.ExternalStream(handle)
            stack.enter_context(torch.cuda.stream(_external[key]))
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            key = ("cupy", handle)
            if key not in _external:
                with warnings.catch_warnings():  # CuPy 14 prefers Stream.from_external (an object's
                    warnings.simplefilter("ignore", DeprecationWarning)  # __cuda_stream__); a handle is what we have
                    _external[key] = cupy.cuda.ExternalStream(handle)
            stack.enter_context(_external[key])
        yield


class Algorithm:
    """A Python function the lab runs as an algorithm (see mmlab.algorithm)."""

    def __init__(self, fn, name, backend, variants, axes, summary, supports, lab=None):
        if backend not in _BACKENDS:
            raise ValueError(f"algorithm '{name}': backend '{backend}' (valid: gpu, host)")
        self.fn, self.name, self.backend, self.supports = fn, name, backend, supports
        self.summary = summary or (inspect.getdoc(fn) or f"{fn.__qualname__} (Python)").splitlines()[0]
        if isinstance(variants, str):
            variants = [variants]
        self.variants = dict(variants) if isinstance(variants, dict) else {v: "" for v in (variants or ["default"])}
        self.axes = {}
        for axis, spec in (axes or {}).items():
            if not isinstance(spec, dict):
                spec = {"values": list(spec)}
            given = list(spec.get("values", []))
            raw_default = spec.get("default", given[0] if given else "")
            values, default = [_text(v) for v in given], _text(raw_default)
            self.axes[axis] = {"values": values or [default], "default": default,
                               "kind": spec.get("kind") or _kind_of(given or [raw_default]),
                               "description": spec.get("description", "")}
        self._keep = []
        self._register(lab)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"<mmlab.Algorithm {self.name} ({self.backend})>"

    def _params(self, c_params):
        p = c_params.contents
        out = {"variant": p.variant.decode()}
        for i in range(p.count):
            name = p.values[i].name.decode()
            kind = self.axes.get(name, {}).get("kind", "choice")
            out[name] = _typed(kind, p.values[i])
        return out

    def _run(self, problem, c_params, a, b, c, workspace, stream, message, size):
        try:
            m, n, k = problem.contents.m, problem.contents.n, problem.contents.k
            params = self._params(c_params)
            if self.backend == "gpu":
                A, B, C = (_arrays.DeviceArray(a, m, k), _arrays.DeviceArray(b, k, n), _arrays.DeviceArray(c, m, n))
                handle = int(stream or 0)
                with _current_stream(handle):
                    self.fn(A, B, C, params=params, stream=handle)
            else:
                A, B, C = (_arrays.host_array(a, m, k), _arrays.host_array(b, k, n), _arrays.host_array(c, m, n))
                self.fn(A, B, C, params=params, stream=None)
            return 0
        except BaseException as e:  # a failed row with the message; the sweep goes on
            _write(message, size, _failure(e))
            return 1

    def _supports(self, problem, c_params, reason, size):
        try:
            m, n, k = problem.contents.m, problem.contents.n, problem.contents.k
            why = self.supports(m, n, k, self._params(c_params))
            if not why:
                return 0
            _write(reason, size, str(why))
            return 1
        except BaseException as e:
            _write(reason, size, f"{type(e).__name__}: {e}")
            return 2

    def _register(self, lab):
        keep = self._keep
        b = lambda s: (keep.append(s.encode()), keep[-1])[1]  # noqa: E731 (bytes kept alive)
        variants = (_Variant * len(self.variants))(*[_Variant(b(v), b(s)) for v, s in self.variants.items()])
        axes = (_Axis * max(1, len(self.axes)))()
        for i, (name, x) in enumerate(self.axes.items()):
            values = (ctypes.c_char_p * len(x["values"]))(*[b(v) for v in x["values"]])
            keep.append(values)
            axes[i] = _Axis(b(name), _KINDS[x["kind"]], b(x["description"]), b(x["default"]), values,
                            len(x["values"]))
        run = _RUN(self._run)
        supports = _SUPPORTS(self._supports) if self.supports else _SUPPORTS()
        algo = _CAlgorithm(b(self.name), b(self.summary), _BACKENDS[self.backend], variants, len(self.variants),
                           axes, len(self.axes), supports, None, run)
        info = _Info(_ABI_VERSION, b("python"), ctypes.pointer(algo), 1)
        keep += [variants, axes, run, supports, algo, info]
        try:
            code = inspect.getsource(self.fn)
        except (OSError, TypeError):
            code = repr(self.fn.__code__.co_code)
        digest = "sha256:" + hashlib.sha256(code.encode()).hexdigest()[:16]
        source = f"python:{self.fn.__module__}.{self.fn.__qualname__}"
        message = ctypes.create_string_buffer(2048)
        if lab is None:
            add = _lib._fn("mmlab_add_algorithms", ctypes.c_int32, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                           ctypes.c_char_p, ctypes.c_size_t)
            status = add(ctypes.addressof(info), source.encode(), digest.encode(), message, len(message))
        else:  # a mmlab.Lab's own (its handle kept: the lab holds this function while it lives)
            add = _lib._fn("mmlab_lab_add_algorithms", ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t)
            status = add(lab._handle._handle, ctypes.addressof(info), source.encode(), digest.encode(), message,
                         len(message))
        if status != 0:
            raise ValueError(message.value.decode(errors="replace"))
        # Kept while the lab lives (the process's: for the life of the process): the lab holds its functions.
        (_registered if lab is None else lab._algorithms).append(self)


_registered = []


def algorithm(name, backend="gpu", *, variants=None, axes=None, summary=None, supports=None, lab=None):
    """Makes `fn(a, b, c, *, params, stream)` an algorithm of the lab named `name`.

    backend "gpu": a, b, c are the lab's device buffers (row-major float32, C = A B; usable as torch
    tensors, CuPy arrays or numba device arrays without a copy) and `stream` the lab's stream handle
    (an int, for torch.cuda.ExternalStream, cupy.cuda.ExternalStream, numba.cuda.external_stream or a
    launch), which is also torch's and CuPy's current stream during the call (numba has none: pass it). backend "host": numpy arrays, stream None.
    variants: names (or {name: summary}); axes: {name: [values, the default first]} or
    {name: {"values": [...], "default": ..., "kind": "integer"|"shape"|"choice", "description": ...}};
    `params` holds the variant and each axis's value (ints, tuples for shapes). supports: optional
    `fn(m, n, k, params)` -> None, or the reason it cannot run (a `skipped` row). lab: a mmlab.Lab to add it
    to (its runs only); the process's lab by default."""
    def wrap(fn):
        return Algorithm(fn, name, backend, variants, axes, summary, supports, lab)
    return wrap
