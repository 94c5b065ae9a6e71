"""hlo.compile and hlo.Executable: a StableHLO module compiled by the C
library, called on numpy arrays."""
import ctypes
import glob
import os
import re
import shutil
import tempfile
import threading

import numpy as np

from . import _lib
from ._lib import HloError, lib, check

__all__ = ["compile", "Executable", "TensorType", "MemoryAnalysis", "backends"]

try:
    from . import _fast as _FAST
except ImportError:     # built without the Python headers: ctypes alone
    _FAST = None
if os.environ.get("HLO_PYTHON_NO_FAST"):
    _FAST = None
if _FAST is not None:
    _FAST.init(*[ctypes.cast(getattr(lib, f), ctypes.c_void_p).value for f in (
        "hlo_executable_run", "hlo_buffer_rank", "hlo_buffer_dtype", "hlo_buffer_dims",
        "hlo_buffer_data", "hlo_buffer_nbytes", "hlo_buffer_destroy")],
        tuple(_lib.hlo_to_dtype), np.empty)


def fast_path_available():
    """Whether calls take the C extension's fast path (hlo._fast)."""
    return _FAST is not None


_BACKENDS = {"interp": 0, "interpreter": 0, "cpu": 1, "cuda": 2, "gpu": 2}


def backends():
    """The backends this machine can run: "interp" always, "cpu" when a C
    compiler ($HLO_CC, else cc) is on the PATH, "cuda" when the CUDA driver
    library loads. (The C API has no query of its own: docs/python.md.)"""
    out = ["cpu"] if shutil.which((os.environ.get("HLO_CC") or "cc").split()[0]) else []
    out.append("interp")
    try:
        ctypes.CDLL(os.environ.get("HLO_CUDA_LIB") or "libcuda.so.1")
        out.append("cuda")
    except OSError:
        pass
    return out


def _backend_code(backend):
    if backend is None:
        return 1
    try:
        return _BACKENDS[str(backend).lower()]
    except KeyError:
        raise HloError(_lib.INVALID_ARGUMENT, "backend=%r: expected one of %s" % (
            backend, ", ".join(sorted(set(_BACKENDS)))), None) from None


def _ml_dtypes():
    """ml_dtypes when installed (int4 and friends), else None."""
    try:
        import ml_dtypes
        return ml_dtypes
    except ImportError:
        return None


class TensorType:
    """The type of an argument or result: ``shape`` (a tuple, None for a `?`
    dim), ``dtype`` (a numpy dtype; None where numpy has none), ``name`` (the
    MLIR element type, "f32"), ``kind`` ("tensor", "token" or "tuple")."""
    __slots__ = ("shape", "dtype", "name", "kind")

    def __init__(self, shape, name, kind="tensor"):
        self.shape = tuple(shape)
        self.name = name
        self.dtype = _lib.DTYPES.get(name)
        self.kind = kind

    def __repr__(self):
        if self.kind != "tensor":
            return self.kind
        return "%s[%s]" % (self.name, ",".join("?" if d is None else str(d) for d in self.shape))

    def __eq__(self, other):
        return (isinstance(other, TensorType) and
                (self.shape, self.name, self.kind) == (other.shape, other.name, other.kind))

    def __hash__(self):
        return hash((self.shape, self.name, self.kind))


def _split_top(s):
    """Splits `s` at top-level commas (outside <>, (), [], {}, quotes)."""
    parts, depth, cur, q = [], 0, [], False
    for ch in s:
        if ch == '"':
            q = not q
        elif not q and ch in "<([{":
            depth += 1
        elif not q and ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0 and not q:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def _match(s, i, open_ch, close_ch):
    """Index just past the bracket closing the one at s[i]."""
    depth, q = 0, False
    for j in range(i, len(s)):
        ch = s[j]
        if ch == '"' and s[j - 1] != "\\":
            q = not q
        elif q:
            continue
        elif ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(s)


_TENSOR = re.compile(r"tensor<((?:[0-9?]+x)*)([a-z][a-zA-Z0-9_]*(?:<[^>]*>)?)")


def _parse_type(t):
    t = t.strip()
    m = _TENSOR.match(t)
    if m:
        dims = [None if d == "?" else int(d) for d in m.group(1).split("x") if d]
        return TensorType(dims, m.group(2))
    if t.startswith("!stablehlo.token"):
        return TensorType((), "token", "token")
    if t.startswith("tuple<"):
        return TensorType((), "tuple", "tuple")
    return TensorType((), t, "other")


def signature(text, entry=None):
    """(input types, output types) of function `entry` (None: main, or the
    only function) of a module's text, from its `func.func` line."""
    funcs = [m for m in re.finditer(r"func\.func\s+(?:public\s+|private\s+)?@([\w.$-]+)\s*\(", text)]
    if not funcs:
        return None
    pick = None
    want = entry or "main"
    for m in funcs:
        if m.group(1) == want:
            pick = m
    if pick is None:
        if entry is not None or len(funcs) > 1:
            return None
        pick = funcs[0]
    i = pick.end() - 1
    j = _match(text, i, "(", ")")
    args = []
    for a in _split_top(text[i + 1:j - 1]):
        a = a.split(":", 1)[1] if ":" in a else a
        args.append(_parse_type(a))
    rest = text[j:].lstrip()
    outs = []
    if rest.startswith("->"):
        rest = rest[2:].lstrip()
        if rest.startswith("("):
            k = _match(rest, 0, "(", ")")
            outs = [_parse_type(r) for r in _split_top(rest[1:k - 1])]
        else:
            outs = [_parse_type(rest)]
    return args, outs


class MemoryAnalysis:
    """What Executable.memory_analysis() returns, with the attribute names of
    JAX's ``compiled.memory_analysis()`` (bytes)."""

    def __init__(self, m):
        self.argument_size_in_bytes = m.argument_bytes
        self.output_size_in_bytes = m.output_bytes
        self.alias_size_in_bytes = m.alias_bytes
        self.temp_size_in_bytes = m.temp_bytes
        self.constant_size_in_bytes = m.constant_bytes
        self.peak_memory_in_bytes = m.peak_bytes
        self.generated_code_size_in_bytes = 0

    def __repr__(self):
        return "MemoryAnalysis(%s)" % ", ".join(
            "%s=%d" % (k, v) for k, v in self.__dict__.items())


class _Result:
    """Owns one hlo_buffer; numpy arrays made from it keep it alive through
    their base (no copy)."""
    __slots__ = ("ptr", "__array_interface__")

    def __del__(self):
        try:
            lib.hlo_buffer_destroy(self.ptr)
        except Exception:     # interpreter shutdown: the library is gone anyway
            pass


_SMALL = 1 << 12   # results up to this many bytes are copied (cheaper than a view)


def _to_numpy(b, own):
    """numpy array for hlo_buffer `b`; `own`: whether the array takes `b`
    over (else it is copied: a tuple's element). None for a token."""
    rank = lib.hlo_buffer_rank(b)
    if rank == -1:
        if own:
            lib.hlo_buffer_destroy(b)
        return None
    if rank == -2:
        try:
            return tuple(_to_numpy(lib.hlo_buffer_tuple_element(b, i), False)
                         for i in range(lib.hlo_buffer_tuple_size(b)))
        finally:
            if own:
                lib.hlo_buffer_destroy(b)
    code = lib.hlo_buffer_dtype(b)
    dt = _lib.hlo_to_dtype[code]
    dims = lib.hlo_buffer_dims(b)
    shape = tuple(dims[i] for i in range(rank))
    nbytes = lib.hlo_buffer_nbytes(b)
    data = lib.hlo_buffer_data(b) if nbytes else None
    if nbytes and not data and _lib.HAS_FETCH:
        err = lib.hlo_buffer_fetch(b)
        if own:
            lib.hlo_buffer_destroy(b)
        check(err)
        raise HloError(10, "hlo_buffer_data returned NULL")
    if dt is None:
        if own:
            lib.hlo_buffer_destroy(b)
        raise HloError(4, "a result of type %s has no numpy dtype (install ml_dtypes)"
                       % _lib.DTYPE_NAMES[code])
    if not own or nbytes <= _SMALL:
        out = np.empty(shape, dt)
        if nbytes:
            ctypes.memmove(out.ctypes.data, data, nbytes)
        if own:
            lib.hlo_buffer_destroy(b)
        return out
    r = _Result()
    r.ptr = b
    raw = dt if dt.isbuiltin == 1 else np.dtype("u%d" % dt.itemsize)
    r.__array_interface__ = {"data": (data, False), "shape": shape,
                             "typestr": raw.str, "version": 3}
    arr = np.asarray(r)
    return arr if raw is dt else arr.view(dt)


def _read_source(text_or_path):
    """(name, text) of a program given as text, bytes or a path."""
    if isinstance(text_or_path, os.PathLike):
        path = os.fspath(text_or_path)
    elif isinstance(text_or_path, bytes):
        return "<bytes>", text_or_path.decode("utf-8", "replace")
    elif isinstance(text_or_path, str):
        if "\n" in text_or_path or "{" in text_or_path:
            return "<string>", text_or_path
        path = text_or_path
    else:
        raise TypeError("hlo.compile: expected program text or a path, got %s"
                        % type(text_or_path).__name__)
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            return path, f.read()
    except OSError as e:
        raise HloError(_lib.NOT_FOUND, "%s: cannot read: %s" % (path, e.strerror)) from None


def compile(text_or_path, backend=None, options=None):
    """Compiles a StableHLO module (MLIR text, bytes, or a path to a .mlir
    file; a str holding a newline or a `{` is text, any other a path) for `backend` ("cpu", the default; "interp"; "cuda").

    options (dict, all optional): entry (function name, default main),
    passes, dump_dir, check, cache_dir, no_cache, cache_max_bytes,
    log_compiles, explain_cache_misses — hlo_compile_options' fields.
    Raises HloError (PARSE_ERROR, VERIFY_ERROR located in the text; the
    compile's errors; NOT_FOUND for an unreadable file)."""
    name, text = _read_source(text_or_path)
    return Executable(text, name, backend, dict(options or {}))


class Executable:
    """A compiled StableHLO function. Call it with one array per argument
    (numpy arrays, anything numpy.asarray takes, or objects with
    __dlpack__); returns a numpy array for one result, a tuple of them for
    several. Safe to call from several threads (runs take turns)."""

    def __init__(self, text, name="<string>", backend=None, options=None):
        options = dict(options or {})
        self._module = None
        self._exe = None
        self.text = text
        self.backend = "cpu" if backend is None else str(backend).lower()
        code = _backend_code(backend)
        entry = options.pop("entry", None)
        raw = text.encode("utf-8")
        m = ctypes.c_void_p()
        check(lib.hlo_module_parse(name.encode(), raw, len(raw), ctypes.byref(m)))
        self._module = m
        opts = _lib.CompileOptions()
        opts.backend = code
        keep = []
        for k, v in options.items():
            if k not in ("passes", "dump_dir", "check", "cache_dir", "no_cache",
                         "cache_max_bytes", "log_compiles", "explain_cache_misses"):
                raise HloError(_lib.INVALID_ARGUMENT, "options: unknown key %r" % k)
            if isinstance(v, (str, os.PathLike)):
                v = os.fspath(v).encode()
                keep.append(v)
            setattr(opts, k, v)
        self._options = options
        e = ctypes.c_void_p()
        check(lib.hlo_executable_compile(m, entry.encode() if entry else None,
                                         ctypes.byref(opts), ctypes.byref(e)))
        self._exe = e
        self.num_args = lib.hlo_executable_num_args(e)
        self.num_results = lib.hlo_executable_num_results(e)
        sig = signature(text, entry)
        if sig is None or len(sig[0]) != self.num_args or len(sig[1]) != self.num_results:
            sig = ([self._c_arg_type(i) for i in range(self.num_args)],
                   [TensorType((), "?", "other")] * self.num_results)
        self.input_types, self.output_types = tuple(sig[0]), tuple(sig[1])
        # Per argument: expected numpy dtype, shape (None: take the input's),
        # hlo dtype code and a ready dims array for static shapes.
        self._expect = []
        for t in self.input_types:
            static = t.kind == "tensor" and None not in t.shape
            dims = (ctypes.c_int64 * max(len(t.shape), 1))(*t.shape) if static else None
            self._expect.append((t, static, dims))
        self._views = _lib.View * max(self.num_args, 1)
        # The fast path's per-argument specs: static tensors of numpy types only.
        self._specs = None
        if all(t.kind == "tensor" and None not in t.shape and t.dtype is not None
               for t in self.input_types):
            self._specs = tuple((t.dtype, _lib.DTYPE_CODE[t.name], t.shape,
                                 None if t.dtype.isbuiltin == 1 else
                                 np.dtype("u%d" % t.dtype.itemsize))
                                for t in self.input_types)
        self._lock = threading.Lock()
        self._optimized_text = None

    def _c_arg_type(self, i):
        dt, rank, dims = ctypes.c_int(), ctypes.c_int(), ctypes.POINTER(ctypes.c_int64)()
        st = lib.hlo_executable_arg_type(self._exe, i, ctypes.byref(dt), ctypes.byref(rank),
                                         ctypes.byref(dims))
        if st:
            _lib.error_from_status(st)
            return TensorType((), "?", "other")
        return TensorType([dims[k] for k in range(rank.value)], _lib.DTYPE_NAMES[dt.value])

    def __del__(self):
        try:
            if getattr(self, "_exe", None):
                lib.hlo_executable_destroy(self._exe)
                self._exe = None
            if getattr(self, "_module", None):
                lib.hlo_module_destroy(self._module)
                self._module = None
        except Exception:     # interpreter shutdown: the library is gone anyway
            pass

    def __repr__(self):
        return "hlo.Executable(%s, (%s) -> (%s))" % (
            self.backend, ", ".join(map(repr, self.input_types)),
            ", ".join(map(repr, self.output_types)))

    def _bad(self, i, msg):
        return HloError(_lib.INVALID_ARGUMENT, "argument %d: %s" % (i, msg))

    def _check_int_range(self, i, a, dtype):
        """Python integers that do not fit the parameter's integer type are
        an error (numpy's own conversion would wrap them silently)."""
        if a.dtype.kind not in "iu" or not a.size:
            return
        info = None
        for mod in (np, _ml_dtypes()):
            try:
                info = mod.iinfo(dtype)
                break
            except Exception:
                continue
        if info is None:
            return
        lo, hi = int(a.min()), int(a.max())
        if lo < int(info.min) or hi > int(info.max):
            raise self._bad(i, "value %d is out of range for %s [%d, %d]"
                            % (lo if lo < int(info.min) else hi, np.dtype(dtype).name,
                               int(info.min), int(info.max)))

    def _as_array(self, i, x, t):
        """x as a C-contiguous numpy array of the parameter's type."""
        if type(x) is not np.ndarray:
            if isinstance(x, (bool, int, float, complex, list, tuple)) and t.dtype is not None:
                # Python numbers and lists take the parameter's type when
                # numpy's own type for them casts to it within its kind.
                a = np.asarray(x)
                if a.dtype != object and np.can_cast(a.dtype, t.dtype, "same_kind"):
                    self._check_int_range(i, a, t.dtype)
                    return np.asarray(a, t.dtype)
                return a
            if isinstance(x, np.generic) or hasattr(x, "__array__"):
                x = np.asarray(x)
            elif hasattr(x, "__dlpack__"):
                x = np.from_dlpack(x)
            else:
                try:
                    x = np.asarray(x)
                except Exception as e:
                    raise self._bad(i, "cannot make an array of %s: %s"
                                    % (type(x).__name__, e)) from None
                if x.dtype == object:
                    raise self._bad(i, "cannot make an array of %s" % type(x).__name__)
        if not x.flags.c_contiguous:
            raise self._bad(i, "not C-contiguous (strides %s for shape %s); pass "
                            "numpy.ascontiguousarray(x)" % (x.strides, x.shape))
        return x

    def _call_fast(self, args):
        """The results as a list through hlo._fast, or None where it cannot
        take these arguments (then nothing ran)."""
        if self._specs is None or _FAST is None:
            return None
        r = _FAST.run(self._exe.value, self.num_results, self._specs, args)
        if r is None:
            return None
        if type(r) is int:
            raise _lib.error_from_status(ctypes.c_void_p(r))
        try:
            for k, x in enumerate(r):
                if type(x) is int:
                    r[k] = None
                    r[k] = _to_numpy(ctypes.c_void_p(x), True)
        except BaseException:
            for x in r:          # the large results not yet wrapped
                if type(x) is int:
                    lib.hlo_buffer_destroy(ctypes.c_void_p(x))
            raise
        return r

    def __call__(self, *args):
        r = self._call_fast(args)
        if r is None:
            r = self._call_slow(args)
        return r[0] if self.num_results == 1 else tuple(r)

    def _call_slow(self, args):
        n = self.num_args
        if len(args) != n:
            raise HloError(_lib.INVALID_ARGUMENT, "expected %d argument%s %s, got %d" % (
                n, "" if n == 1 else "s", list(self.input_types), len(args)))
        views = self._views()
        keep = []
        for i, x in enumerate(args):
            t, static, dims = self._expect[i]
            v = views[i]
            if t.kind == "token":
                v.rank = -1
                continue
            if t.kind != "tensor":
                raise self._bad(i, "parameters of type %r cannot be passed yet" % t)
            x = self._as_array(i, x, t)
            if x.dtype != t.dtype:
                raise self._bad(i, "expected %r, got %s%s (dtype %s)" % (
                    t, _lib.DTYPE_NAMES[_lib.dtype_to_hlo[x.dtype]]
                    if x.dtype in _lib.dtype_to_hlo else "?", list(x.shape), x.dtype))
            if static:
                if x.shape != t.shape:
                    raise self._bad(i, "expected %r, got shape %s" % (t, list(x.shape)))
                v.dims = dims
            else:
                if len(x.shape) != len(t.shape) or any(
                        e is not None and e != d for e, d in zip(t.shape, x.shape)):
                    raise self._bad(i, "expected %r, got shape %s" % (t, list(x.shape)))
                d = (ctypes.c_int64 * max(x.ndim, 1))(*x.shape)
                keep.append(d)
                v.dims = d
            v.dtype = _lib.dtype_to_hlo[x.dtype]
            v.rank = x.ndim
            v.data = x.ctypes.data
            keep.append(x)
        out = ctypes.POINTER(ctypes.c_void_p)()
        check(lib.hlo_executable_run(self._exe, views, n, ctypes.byref(out)))
        try:
            res = [None] * self.num_results
            for k in range(self.num_results):
                b = out[k]
                out[k] = None
                res[k] = _to_numpy(b, True)
        finally:
            for k in range(self.num_results):
                if out[k]:
                    lib.hlo_buffer_destroy(out[k])
            _lib.libc_free(ctypes.cast(out, ctypes.c_void_p))
        return res

    def run(self, *args):
        """Like calling the executable, but always a list of results."""
        r = self._call_fast(args)
        return r if r is not None else self._call_slow(args)

    def cost_analysis(self):
        """{'flops', 'transcendentals', 'bytes accessed'} as XLA counts them
        (JAX's compiled.cost_analysis() keys)."""
        c = _lib.CostAnalysis()
        check(lib.hlo_executable_cost_analysis(self._exe, ctypes.byref(c)))
        return {"flops": c.flops, "transcendentals": c.transcendentals,
                "bytes accessed": c.bytes_accessed}

    def memory_analysis(self):
        """MemoryAnalysis: argument, output, alias, temp, constant and peak
        bytes (CPU backend only: HloError on the interpreter)."""
        m = _lib.MemoryAnalysis()
        check(lib.hlo_executable_memory_analysis(self._exe, ctypes.byref(m)))
        return MemoryAnalysis(m)

    def as_text(self):
        """The optimised module (after the backend's pass pipeline), read
        from a dump of one more compile of the program (the C API has no
        accessor for it yet); the input text where no pass ran."""
        with self._lock:
            if self._optimized_text is None:
                d = tempfile.mkdtemp(prefix="hlo-dump-")
                try:
                    opts = {k: v for k, v in self._options.items() if k != "dump_dir"}
                    opts["dump_dir"] = d
                    Executable(self.text, "<string>", self.backend, opts)
                    after = sorted(glob.glob(os.path.join(d, "*.after.mlir")))
                    if after:
                        with open(after[-1]) as f:
                            self._optimized_text = f.read()
                    else:
                        self._optimized_text = self.text
                finally:
                    shutil.rmtree(d, ignore_errors=True)
            return self._optimized_text
