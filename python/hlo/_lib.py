"""The C library (include/hlo/hlo.h) through ctypes: loading libhlo.so, the
function signatures, the element-type table and hlo_status -> HloError.

Why ctypes and not a CPython extension: docs/python.md (measured overhead).
"""
import ctypes
import os

import numpy as np

__all__ = ["lib", "HloError", "check", "View", "CompileOptions", "CostAnalysis",
           "MemoryAnalysis", "CustomCallInfo", "CUSTOM_CALL_FN", "DTYPES", "dtype_to_hlo",
           "hlo_to_dtype"]


def _find_library():
    """$HLO_LIBRARY, else the libhlo.so installed beside this file."""
    env = os.environ.get("HLO_LIBRARY")
    if env:
        return env
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libhlo.so")
    if os.path.exists(here):
        return here
    raise ImportError(
        "hlo: libhlo.so not found beside the package (%s); install the package with "
        "`pip install .` from the repository, or set HLO_LIBRARY to a libhlo.so built "
        "by `make shared`" % here)


lib = ctypes.CDLL(_find_library())
_libc = ctypes.CDLL(None)

# ------------------------------------------------------------------ types

_status = ctypes.c_void_p


class View(ctypes.Structure):
    """hlo_buffer_view."""
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("dims", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p)]


class CompileOptions(ctypes.Structure):
    """hlo_compile_options, followed by zero padding so that fields the C
    struct gains later read as zero (their documented default)."""
    _fields_ = [("backend", ctypes.c_int), ("passes", ctypes.c_char_p),
                ("dump_dir", ctypes.c_char_p), ("check", ctypes.c_bool),
                ("cache_dir", ctypes.c_char_p), ("no_cache", ctypes.c_bool),
                ("cache_max_bytes", ctypes.c_uint64), ("log_compiles", ctypes.c_bool),
                ("explain_cache_misses", ctypes.c_bool), ("_pad", ctypes.c_char * 256)]


class CostAnalysis(ctypes.Structure):
    _fields_ = [("flops", ctypes.c_double), ("transcendentals", ctypes.c_double),
                ("bytes_accessed", ctypes.c_double)]


class MemoryAnalysis(ctypes.Structure):
    _fields_ = [("argument_bytes", ctypes.c_int64), ("output_bytes", ctypes.c_int64),
                ("alias_bytes", ctypes.c_int64), ("temp_bytes", ctypes.c_int64),
                ("constant_bytes", ctypes.c_int64), ("peak_bytes", ctypes.c_int64)]


_vp = ctypes.c_void_p
_P = ctypes.POINTER


def _sig(name, res, *args):
    f = getattr(lib, name)
    f.restype = res
    f.argtypes = list(args)
    return f


_sig("hlo_status_code_of", ctypes.c_int, _status)
_sig("hlo_status_message", ctypes.c_char_p, _status)
_sig("hlo_status_code_name", ctypes.c_char_p, ctypes.c_int)
_sig("hlo_status_print", None, _status, _vp)
_sig("hlo_status_free", None, _status)
_sig("hlo_dtype_name", ctypes.c_char_p, ctypes.c_int)
_sig("hlo_dtype_size", ctypes.c_size_t, ctypes.c_int)
_sig("hlo_module_parse", _status, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, _P(_vp))
_sig("hlo_module_destroy", None, _vp)
_sig("hlo_buffer_dtype", ctypes.c_int, _vp)
_sig("hlo_buffer_rank", ctypes.c_int, _vp)
_sig("hlo_buffer_dims", _P(ctypes.c_int64), _vp)
_sig("hlo_buffer_data", _vp, _vp)
_sig("hlo_buffer_nbytes", ctypes.c_size_t, _vp)
_sig("hlo_buffer_tuple_size", ctypes.c_int, _vp)
_sig("hlo_buffer_tuple_element", _vp, _vp, ctypes.c_int)
_sig("hlo_buffer_destroy", None, _vp)
_sig("hlo_executable_compile", _status, _vp, ctypes.c_char_p, _P(CompileOptions), _P(_vp))
_sig("hlo_executable_num_args", ctypes.c_int, _vp)
_sig("hlo_executable_num_results", ctypes.c_int, _vp)
_sig("hlo_executable_arg_type", _status, _vp, ctypes.c_int, _P(ctypes.c_int),
     _P(ctypes.c_int), _P(_P(ctypes.c_int64)))
_sig("hlo_executable_run", _status, _vp, _P(View), ctypes.c_int, _P(_P(_vp)))
_sig("hlo_executable_cost_analysis", _status, _vp, _P(CostAnalysis))
_sig("hlo_executable_memory_analysis", _status, _vp, _P(MemoryAnalysis))
_sig("hlo_executable_destroy", None, _vp)
# Newer entry points (device-resident buffers): used when present.
HAS_FETCH = hasattr(lib, "hlo_buffer_fetch")
if HAS_FETCH:
    _sig("hlo_buffer_fetch", _status, _vp)


class CustomCallInfo(ctypes.Structure):
    """hlo_custom_call_info."""
    _fields_ = [("target", ctypes.c_char_p), ("platform", ctypes.c_char_p),
                ("backend_config", _vp), ("backend_config_len", ctypes.c_size_t),
                ("api_version", ctypes.c_int), ("has_side_effect", ctypes.c_bool),
                ("file", ctypes.c_char_p), ("line", ctypes.c_uint), ("column", ctypes.c_uint)]


# hlo_custom_call_fn: (user_data, info, operands, num_operands, results,
# num_results) -> hlo_status. The result is declared a plain pointer-sized
# integer: ctypes returns it to C as is (None -> NULL, success).
CUSTOM_CALL_FN = ctypes.CFUNCTYPE(ctypes.c_void_p, _vp, _P(CustomCallInfo), _P(View),
                                  ctypes.c_int, _P(View), ctypes.c_int)
# The custom-call API (host callbacks, python/hlo/_callback.py): used when
# the library has it (an older HLO_LIBRARY may not).
HAS_CUSTOM_CALL = hasattr(lib, "hlo_custom_call_register")
if HAS_CUSTOM_CALL:
    _sig("hlo_custom_call_register", _status, ctypes.c_char_p, ctypes.c_char_p,
         CUSTOM_CALL_FN, _vp)
    _sig("hlo_custom_call_unregister", _status, ctypes.c_char_p, ctypes.c_char_p)
    _sig("hlo_status_create", _vp, ctypes.c_int, ctypes.c_char_p)

_libc.free.argtypes = [_vp]
_libc.free.restype = None
_libc.open_memstream.argtypes = [_P(_vp), _P(ctypes.c_size_t)]
_libc.open_memstream.restype = _vp
_libc.fclose.argtypes = [_vp]
_libc.fclose.restype = ctypes.c_int
libc_free = _libc.free

# ----------------------------------------------------------------- errors

# hlo_status_code, in include/hlo/hlo.h's order.
CODES = ["OK", "INVALID_ARGUMENT", "PARSE_ERROR", "VERIFY_ERROR", "UNIMPLEMENTED",
         "OUT_OF_RANGE", "RESOURCE_EXHAUSTED", "NOT_FOUND", "UNAVAILABLE", "FAILED_CHECK",
         "INTERNAL"]
INVALID_ARGUMENT = 1
PARSE_ERROR = 2
NOT_FOUND = 7


class HloError(Exception):
    """An error of the hlo library, or of a call the package checked for it.

    Attributes: ``code`` (the hlo_status_code as an int), ``code_name``
    ("INVALID_ARGUMENT", ...), ``message`` (the bare message) and
    ``diagnostic`` (the full text hlo_status_print writes: ``FILE:LINE:COL:
    error: MESSAGE``, the source line and a caret, the notes), which is also
    what ``str()`` gives.
    """

    def __init__(self, code, message, diagnostic=None):
        self.code = int(code)
        self.code_name = CODES[self.code] if 0 <= self.code < len(CODES) else str(code)
        self.message = message
        self.diagnostic = diagnostic if diagnostic is not None else message
        super().__init__(self.diagnostic)

    def __reduce__(self):
        return (HloError, (self.code, self.message, self.diagnostic))


def _diagnostic(st):
    buf = _vp()
    size = ctypes.c_size_t()
    f = _libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
    if not f:
        return None
    lib.hlo_status_print(st, f)
    _libc.fclose(f)
    text = ctypes.string_at(buf, size.value).decode("utf-8", "replace") if buf else ""
    libc_free(buf)
    return text.rstrip("\n")


def error_from_status(st):
    """HloError for a non-NULL hlo_status, which it frees."""
    try:
        code = lib.hlo_status_code_of(st)
        msg = (lib.hlo_status_message(st) or b"").decode("utf-8", "replace")
        return HloError(code, msg, _diagnostic(st))
    finally:
        lib.hlo_status_free(st)


def check(st):
    """Raises HloError for a non-NULL status (freeing it)."""
    if st:
        raise error_from_status(st)


# ------------------------------------------------------------ element types

def _numpy_dtypes():
    """hlo spelling -> numpy dtype, for every type numpy (and ml_dtypes, when
    installed) can hold."""
    m = {"i1": np.dtype(np.bool_), "i8": np.dtype(np.int8), "i16": np.dtype(np.int16),
         "i32": np.dtype(np.int32), "i64": np.dtype(np.int64), "ui8": np.dtype(np.uint8),
         "ui16": np.dtype(np.uint16), "ui32": np.dtype(np.uint32),
         "ui64": np.dtype(np.uint64), "f16": np.dtype(np.float16),
         "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
         "complex<f32>": np.dtype(np.complex64), "complex<f64>": np.dtype(np.complex128)}
    try:
        import ml_dtypes
    except ImportError:
        return m
    for hname, mname in [("bf16", "bfloat16"), ("i2", "int2"), ("i4", "int4"),
                         ("ui2", "uint2"), ("ui4", "uint4"),
                         ("f4E2M1FN", "float4_e2m1fn"), ("f6E2M3FN", "float6_e2m3fn"),
                         ("f6E3M2FN", "float6_e3m2fn"), ("f8E3M4", "float8_e3m4"),
                         ("f8E4M3", "float8_e4m3"), ("f8E4M3FN", "float8_e4m3fn"),
                         ("f8E4M3FNUZ", "float8_e4m3fnuz"),
                         ("f8E4M3B11FNUZ", "float8_e4m3b11fnuz"), ("f8E5M2", "float8_e5m2"),
                         ("f8E5M2FNUZ", "float8_e5m2fnuz"), ("f8E8M0FNU", "float8_e8m0fnu")]:
        t = getattr(ml_dtypes, mname, None)
        if t is not None:
            m[hname] = np.dtype(t)
    return m


def _dtype_table():
    names = []
    i = 0
    while True:
        n = lib.hlo_dtype_name(i)
        if n is None or n == b"?":
            break
        names.append(n.decode())
        i += 1
    return names


DTYPE_NAMES = _dtype_table()             # hlo_dtype enum value -> "f32"
DTYPE_CODE = {n: i for i, n in enumerate(DTYPE_NAMES)}
_NP = _numpy_dtypes()
DTYPES = {n: _NP[n] for n in DTYPE_NAMES if n in _NP}   # "f32" -> np.dtype
hlo_to_dtype = [_NP.get(n) for n in DTYPE_NAMES]        # enum -> np.dtype or None
dtype_to_hlo = {d: DTYPE_CODE[n] for n, d in DTYPES.items()}  # np.dtype -> enum
