"""Host callbacks in programs hlo.jit runs: jax.pure_callback,
jax.debug.print, jax.debug.callback and jax.experimental.io_callback.

JAX lowers each to a custom call, `stablehlo.custom_call
@xla_ffi_python_cpu_callback(...)` with `mhlo.backend_config = {index = N :
ui64}`, N indexing the lowering's list of Python callables
(`Lowered._lowering.compile_args["host_callbacks"]`; JAX hands that list to
XLA, which calls element N). hlo does the same through its custom-call API
(include/hlo/hlo.h, "custom calls (FFI)"):

  - prepare() rewrites each such call of a lowering's text to the target
    "hlo_python_callback" with a process-wide id in place of N, and files the
    callable under that id (release() forgets them: hlo.jit ties that to the
    executable's life);
  - one handler, registered once for "hlo_python_callback" on every platform,
    finds the callable by id, calls it with numpy copies of the operands (None
    for a token) as XLA's CPU callback does, checks what it returns against
    the call's result types and writes it into the result buffers.

Renaming the target leaves the library's own handling of
xla_ffi_python_cpu_callback (skip when no data comes back, else an error) to
programs that arrive as text, whose callables are not in this process.

An exception in a callable fails the run: the library's error (an HloError
located at the call) names the exception; hlo.jit raises it `from` the
original exception, which the handler keeps for the calling thread
(take_pending()).

The ids are part of the program text, so the persistent compilation cache
serves a program with callbacks only to a process that lowered it in the same
order (ids count up from 2**40 per process).
"""
import ctypes
import itertools
import re
import threading

import numpy as np

from . import _lib
from ._lib import lib

__all__ = ["TARGET", "available", "prepare", "release", "take_pending"]

TARGET = "hlo_python_callback"
# A callback call as JAX prints it (one op per line), and its index.
_CALL = re.compile(r"(stablehlo\.custom_call @)xla_ffi(?:_partitioned)?_python_(?:cpu|gpu)"
                   r"_callback\(")
_INDEX = re.compile(r"(mhlo\.backend_config = \{index = )(\d+)( : ui64\})")
_ID_IN_CONFIG = re.compile(r"index = (\d+)")

_lock = threading.Lock()
_callables = {}                        # id -> callable (under _lock)
_ids = itertools.count(1 << 40)        # far above JAX's own indices
_registered = False
_pending = threading.local()           # the exception of this thread's last failed callback


def available():
    """Whether the library has the custom-call API (an older libhlo.so given
    by HLO_LIBRARY may not: callbacks then keep the library's own handling)."""
    return _lib.HAS_CUSTOM_CALL


def _status(code, message):
    return lib.hlo_status_create(code, message.encode("utf-8", "replace"))


def _view_array(v):
    """A numpy copy of handler buffer view `v`; None for a token."""
    if v.rank == -1:
        return None
    dt = _lib.hlo_to_dtype[v.dtype] if 0 <= v.dtype < len(_lib.hlo_to_dtype) else None
    if dt is None:
        raise TypeError("an operand of type %s has no numpy dtype (install ml_dtypes)"
                        % (_lib.DTYPE_NAMES[v.dtype] if 0 <= v.dtype < len(_lib.DTYPE_NAMES)
                           else v.dtype))
    shape = tuple(v.dims[i] for i in range(v.rank))
    out = np.empty(shape, dt)
    if out.nbytes:
        ctypes.memmove(out.ctypes.data, v.data, out.nbytes)
    return out


def _what(info):
    return ("jax.debug.print, jax.debug.callback or io_callback" if info.has_side_effect
            else "jax.pure_callback")


def _handle(user_data, info_p, operands, num_operands, results, num_results):
    """hlo_custom_call_fn of TARGET. Never raises: any failure becomes an
    hlo_status the library turns into the run's error."""
    try:
        info = info_p.contents
        cfg = ctypes.string_at(info.backend_config, info.backend_config_len).decode(
            "utf-8", "replace") if info.backend_config_len else ""
        m = _ID_IN_CONFIG.search(cfg)
        with _lock:
            fn = _callables.get(int(m.group(1))) if m else None
        if fn is None:
            return _status(_lib.NOT_FOUND,
                           "host callback %r: no Python callable under this id in this "
                           "process (its executable was destroyed, or the program was not "
                           "prepared by hlo.jit)" % cfg)
        args = [_view_array(operands[i]) for i in range(num_operands)]
        try:
            outs = fn(*args)
        except BaseException as e:     # the callable's own error
            _pending.exc = e
            return _status(_lib.INVALID_ARGUMENT, "the Python callback (from %s) raised "
                           "%s: %s" % (_what(info), type(e).__name__, e))
        if outs is None:
            outs = ()
        if not isinstance(outs, (tuple, list)):
            outs = (outs,)
        if len(outs) != num_results:
            return _status(_lib.INVALID_ARGUMENT,
                           "the Python callback (from %s) returned %d values; the call "
                           "has %d results" % (_what(info), len(outs), num_results))
        for i in range(num_results):
            v = results[i]
            if v.rank == -1:
                continue
            dt = _lib.hlo_to_dtype[v.dtype]
            shape = tuple(v.dims[k] for k in range(v.rank))
            a = np.asarray(outs[i])
            if a.shape != shape or a.dtype != dt:
                return _status(_lib.INVALID_ARGUMENT,
                               "the Python callback (from %s) returned %s%s for result %d; "
                               "expected %s%s" % (_what(info), a.dtype, list(a.shape), i, dt,
                                                  list(shape)))
            a = np.ascontiguousarray(a)
            if a.nbytes:
                ctypes.memmove(v.data, a.ctypes.data, a.nbytes)
        return None
    except BaseException as e:    # hlo's own mistake here: still an error, never a crash
        return _status(10, "host callback handler: %s: %s" % (type(e).__name__, e))


_HANDLER = _lib.CUSTOM_CALL_FN(_handle) if _lib.HAS_CUSTOM_CALL else None


def _register():
    """Registers the handler once per process (under _lock)."""
    global _registered
    if not _registered:
        _lib.check(lib.hlo_custom_call_register(TARGET.encode(), b"*", _HANDLER, None))
        _registered = True


def prepare(text, callables):
    """(text', ids): `text` (JAX's StableHLO for one lowering) with each
    Python-callback call renamed to TARGET and its index N replaced by a new
    id under which callables[N] is filed; ids lists them (for release).
    Calls whose index is out of range, and every call when the library lacks
    the custom-call API, are left as they are."""
    if not callables or not available() or "_python_" not in text:
        return text, []
    ids = []
    lines = text.split("\n")
    with _lock:
        _register()
        for k, line in enumerate(lines):
            if not _CALL.search(line):
                continue
            m = _INDEX.search(line)
            if not m or int(m.group(2)) >= len(callables):
                continue
            cid = next(_ids)
            _callables[cid] = callables[int(m.group(2))]
            ids.append(cid)
            line = _INDEX.sub(lambda mm: "%s%d%s" % (mm.group(1), cid, mm.group(3)), line, 1)
            lines[k] = _CALL.sub(lambda mm: mm.group(1) + TARGET + "(", line, 1)
    return "\n".join(lines), ids


def release(ids):
    """Forgets the callables filed under `ids` (a run that still reaches them
    fails with an HloError saying so)."""
    with _lock:
        for i in ids:
            _callables.pop(i, None)


def take_pending():
    """The exception this thread's last failing callback raised, once (then
    None)."""
    e = getattr(_pending, "exc", None)
    _pending.exc = None
    return e
