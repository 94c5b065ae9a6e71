"""hlo.jit: JAX traces and lowers a function to StableHLO; hlo compiles and
runs it. One executable per input signature (pytree structure, shapes,
dtypes, weak types, static argument values), held in memory."""
import functools
import inspect
import threading
import weakref

import numpy as np

from . import _callback, _core
from ._lib import HloError, INVALID_ARGUMENT

__all__ = ["jit", "Lowered", "Compiled"]


def _jax():
    try:
        import jax
    except ImportError as e:
        raise ImportError("hlo.jit needs JAX (pip install jax): %s" % e) from None
    return jax


def _leaf_key(x):
    """What of an argument leaf the compiled program depends on."""
    t = type(x)
    if t is np.ndarray:
        return (x.shape, x.dtype)
    if t in (bool, int, float, complex):
        return t       # weakly typed, as JAX traces it
    shape = getattr(x, "shape", None)
    dtype = getattr(x, "dtype", None)
    if shape is not None and dtype is not None:
        return (tuple(shape), np.dtype(dtype), bool(getattr(x, "weak_type", False)))
    return (t, np.shape(x), np.result_type(x))


class Compiled:
    """A lowered function compiled by hlo: call it with the same (non-static)
    arguments as the lowering; cost_analysis(), memory_analysis(), as_text()
    (the optimised module), input_types, output_types.

    Effect tokens: a function with ordered effects (jax.debug.print(...,
    ordered=True), ordered io_callback) is lowered with token parameters
    and results; they are passed and dropped here, so the call takes and
    gives what the function does."""

    def __init__(self, exe, in_tree, out_tree, static_key):
        self._exe = exe
        self._in_tree = in_tree
        self._out_tree = out_tree
        self._static = static_key
        self._tok_in = tuple(i for i, t in enumerate(exe.input_types) if t.kind == "token")
        self._tok_out = frozenset(i for i, t in enumerate(exe.output_types)
                                  if t.kind == "token")
        self._types = tuple(t for t in exe.input_types if t.kind != "token")

    @property
    def executable(self):
        return self._exe

    @property
    def input_types(self):
        return self._exe.input_types

    @property
    def output_types(self):
        return self._exe.output_types

    def cost_analysis(self):
        return self._exe.cost_analysis()

    def memory_analysis(self):
        return self._exe.memory_analysis()

    def as_text(self):
        return self._exe.as_text()

    _has_callbacks = False
    _in_flight = threading.local()    # ids of the Compiled with callbacks this thread runs

    def _run_leaves(self, leaves):
        if not self._has_callbacks:
            return self._run_leaves_unchecked(leaves)
        # A callback that calls this very executable again would wait for
        # itself (runs of one executable take turns in the library).
        running = getattr(Compiled._in_flight, "ids", None)
        if running is None:
            running = Compiled._in_flight.ids = set()
        if id(self) in running:
            raise HloError(INVALID_ARGUMENT, "a host callback called the hlo.jit function it "
                           "runs in again, with the same signature: runs of one executable "
                           "take turns, so this call would wait for itself")
        running.add(id(self))
        try:
            return self._run_leaves_unchecked(leaves)
        except HloError as e:
            cause = _callback.take_pending()   # a host callback's own exception
            if cause is not None:
                raise e from cause
            raise
        finally:
            running.discard(id(self))

    def _run_leaves_unchecked(self, leaves):
        if not self._tok_in:
            outs = self._exe._call_fast(tuple(leaves))   # exact types: no conversion
            if outs is not None:
                return _jax().tree_util.tree_unflatten(self._out_tree, outs)
        types = self._types
        if len(leaves) != len(types):
            raise HloError(INVALID_ARGUMENT, "expected %d array arguments, got %d"
                           % (len(types), len(leaves)))
        arrs = []
        for i, (x, t) in enumerate(zip(leaves, types)):
            if type(x) is not np.ndarray or x.dtype != t.dtype or not x.flags.c_contiguous:
                # JAX's canonicalisation (f64 -> f32 without x64, scalars to
                # the traced type) and a copy of non-contiguous arrays.
                x = np.asarray(x, dtype=t.dtype, order="C")
            arrs.append(x)
        for i in self._tok_in:          # effect tokens (ascending positions)
            arrs.insert(i, None)
        outs = self._exe.run(*arrs)
        if self._tok_out:
            outs = [o for k, o in enumerate(outs) if k not in self._tok_out]
        jax = _jax()
        return jax.tree_util.tree_unflatten(self._out_tree, outs)

    def __call__(self, *args, **kwargs):
        jax = _jax()
        leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
        if tree != self._in_tree:
            raise HloError(INVALID_ARGUMENT, "arguments have structure %s; compiled for %s"
                           % (tree, self._in_tree))
        return self._run_leaves(leaves)


class Lowered:
    """The StableHLO JAX lowered a function to, for one signature:
    as_text() (JAX's module), compile() -> Compiled."""

    def __init__(self, jitted, lowered, in_tree, static_key):
        self._jitted = jitted
        self._lowered = lowered
        self._in_tree = in_tree
        self._static = static_key
        self._text = None

    def as_text(self):
        if self._text is None:
            self._text = self._lowered.as_text()
        return self._text

    def _host_callbacks(self):
        """The Python callables JAX registered while lowering (host
        callbacks: jax.pure_callback, jax.debug.print, ...), indexed as the
        program's callback calls index them; [] when there are none."""
        lowering = getattr(self._lowered, "_lowering", None)
        args = getattr(lowering, "compile_args", None) or {}
        return list(args.get("host_callbacks") or ())

    def compile(self):
        # Host callbacks: renamed to hlo's registered Python handler, with
        # process-wide ids (python/hlo/_callback.py), forgotten with the
        # executable.
        text, ids = _callback.prepare(self.as_text(), self._host_callbacks())
        try:
            exe = _core.Executable(text, getattr(self._jitted._fun, "__name__", "<jit>")
                                   + ".mlir", self._jitted._backend, self._jitted._options)
        except BaseException:
            _callback.release(ids)
            raise
        c = Compiled(exe, self._in_tree, self._lowered.out_tree, self._static)
        if ids:
            weakref.finalize(exe, _callback.release, ids)
            c._has_callbacks = True
        return c


class Jitted:
    """What hlo.jit returns: call it like the function; .lower(*args)."""

    def __init__(self, fun, backend, static_argnums, static_argnames, donate_argnums,
                 options):
        jax = _jax()
        self._fun = fun
        self._backend = backend
        self._options = dict(options or {})
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        if isinstance(donate_argnums, int):
            donate_argnums = (donate_argnums,)
        nums, names = set(static_argnums), set(static_argnames)
        try:    # as JAX does: names and numbers stand for each other
            params = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):
            params = []
        if any(i < 0 for i in nums):  # as JAX does: counted from the last positional one
            npos = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
            if not npos:
                raise HloError(INVALID_ARGUMENT, "negative static_argnums %s need a function "
                               "whose signature names its positional parameters"
                               % sorted(i for i in nums if i < 0))
            nums = {i + npos if i < 0 else i for i in nums}
        for i, p in enumerate(params):
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                continue
            if p.name in names:
                nums.add(i)
            if i in nums and p.kind != p.POSITIONAL_ONLY:
                names.add(p.name)
        self._static_argnums = tuple(sorted(nums))
        self._static_argnames = tuple(sorted(names))
        self._jax_jit = jax.jit(fun, static_argnums=self._static_argnums,
                                static_argnames=self._static_argnames,
                                donate_argnums=donate_argnums, keep_unused=True)
        self._cache = {}
        self._lock = threading.Lock()
        functools.update_wrapper(self, fun)

    def _split(self, args, kwargs):
        """(dynamic args, dynamic kwargs, static key)."""
        sn, sa = self._static_argnums, self._static_argnames
        if not sn and not sa:
            return args, kwargs, ()
        nargs = len(args)
        dyn = tuple(a for i, a in enumerate(args) if i not in sn)
        dkw = {k: v for k, v in kwargs.items() if k not in sa}
        try:
            # the type too: 2 and 2.0 are equal and hash alike, but trace differently
            skey = (tuple((i, type(args[i]), args[i]) for i in sn if i < nargs) +
                    tuple(sorted(((k, type(v), v) for k, v in kwargs.items() if k in sa),
                                 key=lambda e: e[0])))
            hash(skey)
        except TypeError as e:
            raise HloError(INVALID_ARGUMENT, "static arguments must be hashable: %s" % e) \
                from None
        return dyn, dkw, skey

    def _compiled_for(self, args, kwargs):
        jax = _jax()
        dyn, dkw, skey = self._split(args, kwargs)
        leaves, tree = jax.tree_util.tree_flatten((dyn, dkw))
        key = (tree, skey, tuple(map(_leaf_key, leaves)))
        c = self._cache.get(key)
        if c is None:
            with self._lock:
                c = self._cache.get(key)
                if c is None:
                    c = self.lower(*args, **kwargs).compile()
                    c._in_tree = tree
                    self._cache[key] = c
        return c, leaves

    def __call__(self, *args, **kwargs):
        c, leaves = self._compiled_for(args, kwargs)
        return c._run_leaves(leaves)

    def lower(self, *args, **kwargs):
        """Lowered for these arguments (static ones included)."""
        jax = _jax()
        dyn, dkw, skey = self._split(args, kwargs)
        tree = jax.tree_util.tree_structure((dyn, dkw))
        return Lowered(self, self._jax_jit.lower(*args, **kwargs), tree, skey)

    def cache_size(self):
        """How many executables (signatures) this function holds."""
        return len(self._cache)

    def clear_cache(self):
        with self._lock:
            self._cache.clear()


def jit(fun=None, *, backend=None, static_argnums=(), static_argnames=(), donate_argnums=(),
        options=None):
    """hlo's jax.jit: `fun` is traced and lowered by JAX
    (jax.jit(fun).lower(*args)), the StableHLO compiled by hlo for `backend`
    ("cpu", the default; "interp"; "cuda") and run; arguments and results are
    pytrees (jax.tree_util), results numpy arrays. One executable per input
    signature: tree structure, shapes, dtypes, weak types, static values.
    donate_argnums is passed to JAX (hlo does not reuse donated inputs yet).
    Host callbacks (jax.pure_callback, jax.debug.print, jax.debug.callback,
    io_callback; ordered ones too) run in this process during the call
    (python/hlo/_callback.py); an exception in one is an HloError raised
    from it. options: hlo.compile's options dict. Usable as a decorator, with or
    without arguments."""
    if fun is None:
        return lambda f: Jitted(f, backend, static_argnums, static_argnames, donate_argnums,
                                options)
    return Jitted(fun, backend, static_argnums, static_argnames, donate_argnums, options)
