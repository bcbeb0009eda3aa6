"""libmmlab_lab.so through ctypes (include/mmlab/lab.h): one loader, each function's argtypes beside
its wrapper, the library's own lock (runs and commands take turns in the process). The lab and its
plans are handles; a run's rows come back through a sink as they finish, typed by the schema."""
import ctypes
import json
import os
import pathlib

# The exit statuses of include/mmlab/lab.h (MMLAB_DONE ... MMLAB_INTERRUPTED); tests/python/test_package.py
# holds them to the header.
DONE, FAILED, BAD_INPUT, NOT_WRITTEN, INTERRUPTED = 0, 1, 2, 3, 130

API_VERSION = 6  # include/mmlab/lab.h's MMLAB_LAB_API_VERSION
_NAME = "libmmlab_lab.so"
_library = None


def _candidates():
    if os.environ.get("MMLAB_LIBRARY"):
        yield pathlib.Path(os.environ["MMLAB_LIBRARY"])
    here = pathlib.Path(__file__).resolve().parent
    yield here / "_lib" / _NAME
    yield here.parents[1] / "build" / "bin" / _NAME  # this checkout's build (python/mmlab -> the repository)


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
        lib.path = path
        _library = lib
    return _library


def _fn(name, restype, *argtypes):
    """The library's function `name` as its wrapper calls it: its types declared beside that wrapper."""
    fn = getattr(library(), name)
    fn.restype, fn.argtypes = restype, list(argtypes)
    return fn


_i32, _ptr, _text, _size = ctypes.c_int32, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
_ARGV = ctypes.POINTER(ctypes.c_char_p)


class CommandError(RuntimeError):
    """A command that ended in a failure other than bad input (exit status 1 or 3)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def command(args, *, analyze=False, check=True):
    """Runs `mmlab ARGS` (or `mmlab-analyze ARGS`) in this process, its output on standard output as the
    program's: the exit status. The package's own calls are typed ones (a run's rows through a sink, the
    catalog, compare, a table); this is for a command as such.

    Bad input (exit status 2) raises ValueError with the command's own message; with `check`, any other
    nonzero status raises CommandError."""
    program = "mmlab-analyze" if analyze else "mmlab"
    argv = [program] + [str(a) for a in args]
    c_argv = (ctypes.c_char_p * len(argv))(*[a.encode() for a in argv])
    message = ctypes.create_string_buffer(4096)
    fn = _fn("mmlab_analyze" if analyze else "mmlab_command", _i32, _i32, _ARGV, _text, _text, _size)
    status = fn(len(argv), c_argv, None, message, len(message))
    why = message.value.decode(errors="replace")
    if status == BAD_INPUT:
        raise ValueError(why or f"{program}: bad input")
    if check and status != DONE:
        raise CommandError(why or f"{program} {' '.join(argv[1:])}: exit status {status}", status)
    return status


def interrupted():
    return bool(_fn("mmlab_interrupted", _i32)())


def schema():
    """The CSV schema: {'version', 'results': [{'name', 'type', 'unit'} (a choice column also 'values', its
    domain, and 'open': whether a value may carry a parameter)], 'samples': [...]}."""
    return json.loads(_fn("mmlab_schema_json", _text)().decode())


def version():
    """The git revision the library was built from."""
    return _fn("mmlab_version", _text)().decode()


_TextPut = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


def catalog(lab=None):
    """The lab's algorithms (the process's lab by default) as `mmlab list --format json` lists them."""
    texts = []
    put = _TextPut(lambda _, text: texts.append(text.decode()))
    message = _message()
    _check(_fn("mmlab_catalog", _i32, _ptr, _TextPut, ctypes.c_void_p, _text, _size)(
        (lab or Lab())._handle, put, None, message, len(message)), message, "mmlab_catalog")
    return json.loads(texts[0])


def read_params(algorithm, text, lab=None):
    """A configuration's text (a row's params or resolved) read by the algorithm's axes: {axis: value}."""
    texts = []
    put = _TextPut(lambda _, t: texts.append(t.decode()))
    message = _message()
    _check(_fn("mmlab_read_params", _i32, _ptr, _text, _text, _TextPut, ctypes.c_void_p, _text, _size)(
        (lab or Lab())._handle, algorithm.encode(), text.encode(), put, None, message, len(message)),
        message, "mmlab_read_params")
    return json.loads(texts[0])


def layouts():
    """The layouts of mmlab/plugin.h's structs as the library was compiled: {struct: {'size', 'fields':
    {field: offset}}}, what the package's ctypes declarations must match (a test checks them)."""
    return json.loads(_fn("mmlab_layouts_json", _text)().decode())


# include/mmlab/lab.h's row sink: a cell (kind: 0 empty, 1 text, 2 number) and the callback.
class Value(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("text", ctypes.c_char_p), ("number", ctypes.c_double)]


ROW_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(Value), ctypes.c_int32)


class RowSink(ctypes.Structure):
    _fields_ = [("user", ctypes.c_void_p), ("row", ROW_FN)]


TABLE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p, ctypes.c_char_p,
                            ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p), ctypes.c_int32)


class TableSink(ctypes.Structure):
    _fields_ = [("user", ctypes.c_void_p), ("table", TABLE_FN), ("row", ROW_FN)]


class CompareOptions(ctypes.Structure):
    """include/mmlab/lab.h's mmlab_compare_options."""
    _fields_ = [("baseline", ctypes.c_char_p), ("run", ctypes.c_char_p), ("sizes", _ARGV), ("size_count", ctypes.c_int32),
                ("level", ctypes.c_double), ("resamples", ctypes.c_int32), ("seed", ctypes.c_uint64),
                ("margin", ctypes.c_double), ("family", ctypes.c_char_p), ("metric", ctypes.c_char_p),
                ("cycles", ctypes.c_int32), ("across_runs", ctypes.c_int32), ("baseline_scope", ctypes.c_char_p),
                ("bad_samples", ctypes.c_char_p)]


RESULTS, SAMPLES = 0, 1  # the tables: MMLAB_RESULTS, MMLAB_SAMPLES


def _message():
    return ctypes.create_string_buffer(4096)


def _check(status, message, what):
    why = message.value.decode(errors="replace")
    if status == BAD_INPUT:
        raise ValueError(why or f"{what}: bad input")
    if status not in (DONE, FAILED):
        raise CommandError(why or f"{what}: exit status {status}", status)
    return status


class Lab:
    """A lab handle: the process's own (Lab(), what mmlab.algorithm adds to and the commands use) or a
    new one (Lab(new=True), freed with the object)."""

    def __init__(self, new=False):
        if new:
            message = _message()
            self._handle = _fn("mmlab_lab_new", _ptr, _text, _size)(message, len(message))
            if not self._handle:
                raise CommandError(message.value.decode(errors="replace"), 1)
        else:
            self._handle = _fn("mmlab_lab_default", _ptr)()
        self._owned = new

    def __del__(self):
        if getattr(self, "_owned", False) and self._handle:
            _fn("mmlab_lab_free", None, _ptr)(self._handle)
            self._handle = None


class Plan:
    """A plan handle of a lab's: an experiment file (or none) and keywords, each checked as it is set
    (ValueError with the lab's message)."""

    def __init__(self, lab, experiment=None):
        self.lab = lab
        message = _message()
        self._handle = _fn("mmlab_plan_new", _ptr, _ptr, _text, _text, _size)(lab._handle, str(experiment).encode() if experiment else None,
                                                message, len(message))
        if not self._handle:
            _check(2, message, "mmlab.run")

    def set(self, key, value):
        message = _message()
        _check(_fn("mmlab_plan_set", _i32, _ptr, _text, _text, _text, _size)(self._handle, str(key).encode(), str(value).encode(), message,
                                        len(message)), message, f"mmlab.run: {key}")

    def __del__(self):
        if getattr(self, "_handle", None):
            _fn("mmlab_plan_free", None, _ptr)(self._handle)
            self._handle = None


def _row_callback(tables, errors):
    """The row function of a sink: each row's cells as Python values, appended to tables[table] (a list
    per table); the first error of its own kept in `errors`."""
    def row(_user, table, values, count):
        try:
            cells = [None] * count
            for i in range(count):
                v = values[i]
                if v.kind == 2:
                    cells[i] = v.number
                elif v.kind == 1:
                    cells[i] = v.text.decode()
            tables.setdefault(table, []).append(cells)
        except Exception as e:  # noqa: BLE001 - raised once the call returns
            errors.append(e)

    return ROW_FN(row)


def _collector():
    """A sink that keeps each table's rows as lists of Python values, and the first error of its own."""
    tables, errors = {RESULTS: [], SAMPLES: []}, []
    callback = _row_callback(tables, errors)
    return RowSink(None, callback), callback, tables, errors


def run(plan):
    """Runs a plan: (exit status, its result rows, its sample rows, the name its rows are kept under in the
    library), the rows as lists of values in the schema's column order. The kept rows stand for a results
    file wherever the lab reads one (compare's analysis), with no file written; free_kept(name) drops them."""
    sink, keep_alive, tables, errors = _collector()
    message, name = _message(), ctypes.create_string_buffer(256)
    status = _fn("mmlab_run_kept", _i32, _ptr, _ptr, ctypes.POINTER(RowSink), _text, _size, _text, _size)(
        plan.lab._handle, plan._handle, ctypes.byref(sink), name, len(name), message, len(message))
    del keep_alive
    kept = name.value.decode() or None
    try:
        if errors:
            raise errors[0]
        _check(status if status != INTERRUPTED else DONE, message, "mmlab run")
    except BaseException:
        free_kept(kept)
        raise
    return status, tables[RESULTS], tables[SAMPLES], kept


def free_kept(name):
    """Drops a run's rows kept in the library (run())."""
    if name:
        _fn("mmlab_kept_free", None, _text)(name.encode())


def read(path, lab=None):
    """A results file's rows and its samples file's, as the lab's reader reads them."""
    sink, keep_alive, tables, errors = _collector()
    message = _message()
    status = _fn("mmlab_read", _i32, _ptr, _text, ctypes.POINTER(RowSink), _text, _size)((lab or Lab())._handle, str(path).encode(), ctypes.byref(sink), message,
                                  len(message))
    del keep_alive
    if errors:
        raise errors[0]
    _check(status, message, str(path))
    return tables[RESULTS], tables[SAMPLES]


def _tables_sink():
    """A table sink (mmlab_table_sink) and what it collects: the tables' heads, their rows, its errors."""
    heads, rows, errors = {}, {}, []

    def table(_user, number, title, note, names, types, count):
        heads[number] = {"title": title.decode(), "note": note.decode(),
                         "names": [names[i].decode() for i in range(count)],
                         "types": [types[i].decode() for i in range(count)]}

    callbacks = (TABLE_FN(table), _row_callback(rows, errors))  # kept alive with the sink
    return TableSink(None, *callbacks), callbacks, heads, rows, errors


def _tables(heads, rows):
    return [dict(heads[n], rows=rows.get(n, [])) for n in sorted(heads)]


def analyze_tables(args):
    """`mmlab-analyze ARGS --format json` in this process, its tables handed back, not written: a list of
    {'title', 'note', 'names', 'types', 'rows'} (types as the analysis declares them, "" where it does
    not; rows as lists of values). Bad input raises ValueError with the command's message."""
    sink, _keep, heads, rows, errors = _tables_sink()
    argv = ["mmlab-analyze"] + [str(a) for a in args]
    c_argv = (ctypes.c_char_p * len(argv))(*[a.encode() for a in argv])
    message = _message()
    status = _fn("mmlab_analyze_tables", _i32, _i32, _ARGV, ctypes.POINTER(TableSink), _text, _size)(len(argv), c_argv, ctypes.byref(sink), message, len(message))
    if errors:
        raise errors[0]
    if _check(status, message, "mmlab-analyze " + str(args[0] if args else "")) != 0:
        raise CommandError(message.value.decode(errors="replace") or f"mmlab-analyze: exit status {status}", status)
    return _tables(heads, rows)


def read_table(path):
    """mmlab_read_table: one CSV as a table ({'title', 'note', 'names', 'types', 'rows'}, as analyze_tables
    returns each). Bad input raises ValueError."""
    sink, _keep, heads, rows, errors = _tables_sink()
    message = _message()
    status = _fn("mmlab_read_table", _i32, _text, ctypes.POINTER(TableSink), _text, _size)(
        str(path).encode(), ctypes.byref(sink), message, len(message))
    if errors:
        raise errors[0]
    if _check(status, message, "mmlab_read_table") != 0:
        raise CommandError(message.value.decode(errors="replace") or f"mmlab_read_table: exit status {status}", status)
    return _tables(heads, rows)[0]


def compare(files, options):
    """mmlab_compare: `files` (paths or kept runs' names) against the baseline, `options` a dict of
    mmlab_compare_options' fields (text as str, sizes as a list of str, flags as bool), the rest at the
    command's defaults. Its tables as analyze_tables returns them; bad input raises ValueError."""
    c = CompareOptions()
    _fn("mmlab_compare_defaults", None, ctypes.POINTER(CompareOptions))(ctypes.byref(c))
    keep = []
    for name, value in options.items():
        if name == "sizes":
            keep.append((ctypes.c_char_p * len(value))(*[str(v).encode() for v in value]))
            c.sizes, c.size_count = ctypes.cast(keep[-1], _ARGV), len(value)
        elif dict(CompareOptions._fields_)[name] is ctypes.c_char_p:
            keep.append(str(value).encode())
            setattr(c, name, keep[-1])
        else:
            setattr(c, name, value)
    paths = (ctypes.c_char_p * len(files))(*[str(f).encode() for f in files])
    sink, _keep, heads, rows, errors = _tables_sink()
    message = _message()
    status = _fn("mmlab_compare", _i32, _ARGV, _i32, ctypes.POINTER(CompareOptions), ctypes.POINTER(TableSink), _text,
                 _size)(paths, len(files), ctypes.byref(c), ctypes.byref(sink), message, len(message))
    if errors:
        raise errors[0]
    if _check(status, message, "mmlab_compare") != 0:
        raise CommandError(message.value.decode(errors="replace") or f"mmlab_compare: exit status {status}", status)
    return _tables(heads, rows)
