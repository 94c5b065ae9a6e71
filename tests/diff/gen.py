"""Random program generators for tests/diff/difftest.py (see its docstring).

Each generator takes a Ctx (random choices within size limits) and returns
a Case: a jax function, its numpy inputs and the tolerance of its results.
jax is imported lazily by import_jax(); element types are named f32, bf16,
i8, u32, c64, ... throughout."""
import random

try:
    import numpy as np
except ImportError:  # pragma: no cover - reported by main()
    np = None

jax = jnp = lax = None
BF16 = None


def import_jax():
    """Imports jax (x64, highest matmul precision); returns an error or None."""
    global jax, jnp, lax, BF16
    try:
        import jax as _jax
        _jax.config.update("jax_enable_x64", True)
        _jax.config.update("jax_default_matmul_precision", "highest")
        _jax.config.update("jax_platforms", "cpu")
        import jax.numpy as _jnp
        from jax import lax as _lax
    except Exception as e:  # noqa: BLE001 - any import failure means skip
        return "%s: %s" % (type(e).__name__, e)
    jax, jnp, lax = _jax, _jnp, _lax
    BF16 = _jnp.bfloat16
    return None


def bf16_type():
    global BF16
    if BF16 is None:
        import ml_dtypes
        BF16 = ml_dtypes.bfloat16
    return BF16


# ----------------------------------------------------------------------------
# element types

FLOATS = ["f32", "f64", "f16", "bf16"]
SINTS = ["i8", "i16", "i32", "i64"]
UINTS = ["u8", "u32", "u16", "u64"]
INTS = SINTS + UINTS
ALL = FLOATS + INTS + ["bool"]


def npdt(name):
    """numpy dtype of an element type name (bf16: ml_dtypes.bfloat16)."""
    if name == "bf16":
        return np.dtype(bf16_type())
    return np.dtype({"f32": "float32", "f64": "float64", "f16": "float16",
                     "i8": "int8", "i16": "int16", "i32": "int32",
                     "i64": "int64", "u8": "uint8", "u16": "uint16",
                     "u32": "uint32", "u64": "uint64", "bool": "bool",
                     "c64": "complex64", "c128": "complex128"}[name])


def dtname(dt):
    dt = np.dtype(dt)
    if dt == np.dtype(bf16_type()):
        return "bf16"
    return {"float32": "f32", "float64": "f64", "float16": "f16",
            "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
            "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
            "bool": "bool", "complex64": "c64",
            "complex128": "c128"}[dt.name]


def is_float(name):
    return name in FLOATS


def eps_of(name):
    return {"f32": 2.0 ** -23, "f64": 2.0 ** -52, "f16": 2.0 ** -10,
            "bf16": 2.0 ** -7, "c64": 2.0 ** -23, "c128": 2.0 ** -52}[name]


NORM_RTOL = {"f64": 1e-11, "f32": 2e-5, "f16": 2e-2, "bf16": 6e-2,
             "c64": 2e-5, "c128": 1e-11}

# ----------------------------------------------------------------------------
# generation context


class Ctx:
    """Random choices of one case. pick() choices are categorical and kept
    fixed while shrinking; everything else follows the limits in lim."""

    def __init__(self, r, lim, fix):
        self.r = r
        self.lim = lim
        self.fix = fix
        self.choices = {}
        self.np = np.random.default_rng(r.getrandbits(32))

    def pick(self, name, options):
        v = self.fix[name] if name in self.fix else self.r.choice(options)
        self.choices[name] = v
        return v

    def dim(self, lo=0):
        r = self.r.random()
        hi = max(self.lim["dim"], lo, 1)
        if lo <= 0 and r < 0.05:
            return 0
        if lo <= 1 and r < 0.2:
            return 1
        return self.r.randint(max(lo, 1), hi)

    def rank(self, lo=0, hi=4):
        hi = min(hi, self.lim["rank"])
        return self.r.randint(min(lo, hi), hi)

    def shape(self, lo_rank=0, hi_rank=4, lo_dim=0):
        return tuple(self.dim(lo_dim) for _ in range(self.rank(lo_rank, hi_rank)))

    # data ------------------------------------------------------------------
    def fdata(self, dt, shape, dom="normal", specials=0.0):
        g = self.np
        n = int(np.prod(shape, dtype=np.int64))
        if isinstance(dom, tuple):
            v = g.uniform(dom[0], dom[1], n)
        elif dom == "normal":
            v = g.standard_normal(n) * self.r.choice([1.0, 1.0, 3.0, 100.0, 0.01])
        elif dom == "normal3":
            v = g.standard_normal(n) * self.r.choice([0.5, 1.0, 3.0])
        elif dom == "pos":
            v = np.abs(g.standard_normal(n)) * self.r.choice([1.0, 5.0, 0.01]) + 1e-3
        elif dom == "unit":
            v = g.uniform(-0.999, 0.999, n)
        elif dom == "halves":
            v = g.integers(-12, 13, n) / 2.0 + np.where(g.random(n) < 0.3, g.uniform(-0.4, 0.4, n), 0)
        elif dom == "int":
            v = g.integers(-5, 6, n).astype(np.float64)
        elif dom in ("edge", "edge_finite"):
            big = {"f16": 60000.0, "bf16": 3e38, "f32": 3e38, "f64": 1.7e308}[dt]
            ev = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5,
                           2.0, -2.0, 3.0, -3.0, 2.5, -2.5, 1e-3, -1e-3, 100.0, -100.0,
                           big, -big, 3.14159, -1.5707963, 1e4, -1e4, 0.999, -0.999])
            if dom == "edge_finite":
                ev = ev[np.isfinite(ev)]
            v = ev[g.integers(0, len(ev), n)]
        else:
            raise ValueError(dom)
        if specials > 0 and n:
            sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0])
            m = g.random(n) < specials
            v = np.where(m, sp[g.integers(0, len(sp), n)], v)
        if dt == "f16":
            v = np.where(np.isfinite(v), np.clip(v, -60000, 60000), v)
        if dt == "bf16":
            v = v.astype(np.float32)
        return v.astype(npdt(dt)).reshape(shape)

    def idata(self, dt, shape, lo=None, hi=None):
        g = self.np
        info = np.iinfo(npdt(dt))
        if lo is None:
            if self.r.random() < 0.3:
                lo, hi = info.min, info.max
            else:
                lo, hi = (-10, 10) if info.min < 0 else (0, 20)
        lo, hi = max(lo, info.min), min(hi, info.max)
        return g.integers(lo, hi, size=shape, dtype=npdt(dt), endpoint=True)

    def bdata(self, shape):
        return self.np.random(shape) < 0.5

    def data(self, dt, shape, **kw):
        if dt == "bool":
            return np.asarray(self.bdata(shape))
        if is_float(dt):
            return self.fdata(dt, shape, **kw)
        return self.idata(dt, shape)


class Case:
    def __init__(self, kind, fn, args, tol, ctx):
        self.kind = kind
        self.fn = fn
        self.args = [np.asarray(a) for a in args]
        self.tol = tol  # one tol for every output, or a list
        self.choices = dict(ctx.choices)
        self.expect = None  # optional: args -> expected results (the spec's rule)
        self.sig = kind + ":" + ":".join(str(ctx.choices[k]) for k in sorted(ctx.choices))

    def size(self):
        return sum(int(a.size) + a.ndim for a in self.args)


class Skip(Exception):
    """The generated case is not a valid program; it is not counted."""


EXACT = ("exact",)


def ulp(n, atol_eps=0.0):
    return ("ulp", n, atol_eps)


def norm(dt, scale=1.0):
    return ("norm", NORM_RTOL.get(dt, 1e-5) * scale)


# ----------------------------------------------------------------------------
# generators: each takes a Ctx and returns a Case


def _unary_float_table():
    L = lax
    rm = L.RoundingMethod
    return {
        # name: (fn, domain, ulps, atol in eps)
        "exp": (L.exp, "normal3", 4, 0), "exp2": (L.exp2, "normal3", 4, 0),
        "expm1": (L.expm1, "normal3", 4, 0), "log": (L.log, "pos", 4, 0),
        "log1p": (L.log1p, (-0.9, 5.0), 4, 0), "tanh": (L.tanh, "normal3", 8, 2),
        "logistic": (L.logistic, "normal3", 8, 2), "sin": (L.sin, (-10.0, 10.0), 4, 2),
        "cos": (L.cos, (-10.0, 10.0), 4, 2), "tan": (L.tan, (-1.5, 1.5), 8, 2),
        "sqrt": (L.sqrt, "pos", 1, 0), "rsqrt": (L.rsqrt, "pos", 2, 0),
        "cbrt": (L.cbrt, "normal", 4, 0), "abs": (L.abs, "normal", 0, 0),
        "neg": (L.neg, "normal", 0, 0), "sign": (L.sign, "normal", 0, 0),
        "floor": (L.floor, "halves", 0, 0), "ceil": (L.ceil, "halves", 0, 0),
        "round_afz": (lambda x: L.round(x, rm.AWAY_FROM_ZERO), "halves", 0, 0),
        "round_rne": (lambda x: L.round(x, rm.TO_NEAREST_EVEN), "halves", 0, 0),
        "is_finite": (L.is_finite, "normal", 0, 0), "erf": (L.erf, "normal3", 4, 2),
        "erf_inv": (L.erf_inv, "unit", 16, 4), "lgamma": (L.lgamma, (-4.5, 10.0), 16, 8),
        "digamma": (L.digamma, (0.1, 10.0), 16, 8), "asin": (L.asin, "unit", 8, 2),
        "acos": (L.acos, "unit", 8, 2), "atan": (L.atan, "normal", 8, 2),
        "sinh": (L.sinh, "normal3", 8, 2), "cosh": (L.cosh, "normal3", 8, 2),
        "asinh": (L.asinh, "normal", 8, 2), "acosh": (L.acosh, (1.0, 10.0), 8, 2),
        "atanh": (L.atanh, "unit", 8, 2), "square": (L.square, "normal", 0, 0),
    }


def gen_unary_float(c):
    tab = _unary_float_table()
    op = c.pick("op", sorted(tab) + ["integer_pow", "reduce_precision"])
    dt = c.pick("dt", FLOATS)
    sh = c.shape()
    spec = 0.1 if c.r.random() < 0.5 else 0.0
    edge = c.r.random() < 0.25
    if op == "integer_pow":
        n = c.pick("n", [-3, -2, -1, 0, 1, 2, 3, 5])
        x = c.fdata(dt, sh, "normal3", spec)
        return Case("unary_f", lambda a: lax.integer_pow(a, n), [x], ulp(4), c)
    if op == "reduce_precision":
        eb = c.r.randint(2, 8 if dt != "f64" else 11)
        mb = c.r.randint(0, 23 if dt != "f64" else 52)
        x = c.fdata(dt, sh, "normal", 0.1)
        return Case("unary_f", lambda a: lax.reduce_precision(a, eb, mb), [x], EXACT, c)
    fn, dom, u, atol = tab[op]
    x = c.fdata(dt, sh, "edge" if edge else dom, spec)
    if dt in ("f16", "bf16"):
        u = min(u, 2)
    if dt == "f64" and u >= 8:
        u = 64  # XLA's f64 chlo decompositions (atanh, asin, ...) lose ~40 ulp
    tol = EXACT if u == 0 and op not in ("square",) else ulp(u, atol)
    return Case("unary_f", fn, [x], tol, c)


def gen_unary_int(c):
    L = lax
    tab = {"abs": L.abs, "neg": L.neg, "sign": L.sign, "not": L.bitwise_not,
           "popcnt": L.population_count, "clz": L.clz}
    op = c.pick("op", sorted(tab))
    dt = c.pick("dt", INTS + (["bool"] if op == "not" else []))
    if op in ("abs", "neg", "sign") and dt in UINTS:
        raise Skip()
    x = c.data(dt, c.shape())
    return Case("unary_i", tab[op], [x], EXACT, c)


def _binary_table():
    L = lax
    return {"add": L.add, "sub": L.sub, "mul": L.mul, "div": L.div, "rem": L.rem,
            "pow": L.pow, "max": L.max, "min": L.min, "atan2": L.atan2,
            "and": L.bitwise_and, "or": L.bitwise_or, "xor": L.bitwise_xor,
            "shl": L.shift_left, "shrl": L.shift_right_logical,
            "shra": L.shift_right_arithmetic, "nextafter": L.nextafter,
            "eq": L.eq, "ne": L.ne, "lt": L.lt, "le": L.le, "gt": L.gt, "ge": L.ge}


def gen_binary(c):
    tab = _binary_table()
    op = c.pick("op", sorted(tab))
    fops = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2",
            "nextafter", "eq", "ne", "lt", "le", "gt", "ge"]
    iops = ["add", "sub", "mul", "div", "rem", "max", "min", "and", "or",
            "xor", "shl", "shrl", "shra", "eq", "ne", "lt", "le", "gt", "ge"]
    bops = ["and", "or", "xor", "eq", "ne", "lt", "le", "gt", "ge", "max", "min"]
    types = ([d for d in FLOATS if op in fops] + [d for d in INTS if op in iops]
             + (["bool"] if op in bops else []))
    if not types:
        raise Skip()
    dt = c.pick("dt", types)
    sh = c.shape()
    const = c.r.random() < 0.2  # second operand baked into the program
    if is_float(dt):
        spec = 0.1 if op not in ("pow",) or c.r.random() < 0.5 else 0.0
        x = c.fdata(dt, sh, "pos" if op == "pow" else "normal", spec)
        y = c.fdata(dt, sh, "normal3" if op == "pow" else "normal", spec)
        if c.r.random() < 0.3:
            x, y = c.fdata(dt, sh, "edge"), c.fdata(dt, sh, "edge")
        if op in ("eq", "ne", "lt", "le", "gt", "ge", "max", "min") and c.r.random() < 0.5:
            y = np.where(c.np.random(sh) < 0.5, x, y).astype(x.dtype)
        tol = {"pow": ulp(4 if dt in ("f32", "f64") else 1),
               "atan2": ulp(4 if dt in ("f32", "f64") else 1, 2)}.get(op, EXACT)
    elif dt == "bool":
        x, y, tol = c.bdata(sh), c.bdata(sh), EXACT
    else:
        x, y, tol = c.idata(dt, sh), c.idata(dt, sh), EXACT
        info = np.iinfo(npdt(dt))
        if op in ("div", "rem"):
            y = np.where(y == 0, 1, y).astype(y.dtype)
            if info.min < 0:
                y = np.where((x == info.min) & (y == -1), 1, y).astype(y.dtype)
        if op == "pow":
            x = c.idata(dt, sh, -4, 4)
            y = c.idata(dt, sh, 0, 6)
        if op in ("shl", "shrl", "shra"):
            bits = info.bits
            y = c.idata(dt, sh, 0, bits - 1 if c.r.random() < 0.8 else bits + 3)
        if op in ("eq", "ne", "lt", "le", "gt", "ge", "max", "min") and c.r.random() < 0.5:
            y = np.where(c.np.random(sh) < 0.5, x, y).astype(x.dtype)
    fn = tab[op]
    if const:
        if op == "div" and is_float(dt):
            tol = ulp(1)  # XLA folds x / const into x * (1 / const)
        yc = y
        return Case("binary", lambda a: fn(a, yc), [x], tol, c)
    return Case("binary", fn, [x, y], tol, c)


def gen_complex(c):
    L = lax
    un = {"exp": L.exp, "log": L.log, "sqrt": L.sqrt, "rsqrt": L.rsqrt, "tanh": L.tanh,
          "sin": L.sin, "cos": L.cos, "tan": L.tan, "abs": L.abs, "sign": L.sign,
          "neg": L.neg, "expm1": L.expm1, "log1p": L.log1p, "real": L.real, "imag": L.imag,
          "conj": L.conj, "asin": L.asin, "acos": L.acos, "atan": L.atan, "asinh": L.asinh,
          "acosh": L.acosh, "atanh": L.atanh, "sinh": L.sinh, "cosh": L.cosh,
          "logistic": L.logistic, "square": L.square, "cbrt": None}
    bi = {"add": L.add, "sub": L.sub, "mul": L.mul, "div": L.div, "pow": L.pow,
          "eq": L.eq, "ne": L.ne, "complex": L.complex}
    op = c.pick("op", sorted(k for k in un if un[k]) + sorted(bi))
    dt = c.pick("dt", ["c64", "c128"])
    fdt = "f32" if dt == "c64" else "f64"
    sh = c.shape()
    dom = "normal3" if op not in ("exp", "sinh", "cosh", "tan", "tanh") else (-3.0, 3.0)

    # XLA's complex pow of huge/infinite values gives NaN where the exact
    # result is 0 or finite: no edge values for pow
    edge = c.r.random() < 0.2 and op != "pow"

    def cdata():
        # finite edge values only: for inf/NaN parts XLA itself departs from
        # C99 Annex G (sqrt(nan-inf*i), abs(nan+inf*i) give NaN on XLA)
        d = "edge_finite" if edge else dom
        z = c.fdata(fdt, sh, d) + 1j * c.fdata(fdt, sh, d)
        return z.astype(npdt(dt))
    # relative to max(|xla|, 0.1): sinh/tanh near 0 lose digits to cancellation
    tol = ("crel", 1e-5 if dt == "c64" else 1e-12)
    if op in ("add", "sub", "neg", "real", "imag", "conj", "eq", "ne", "complex"):
        tol = EXACT
    if op in un:
        return Case("complex", un[op], [cdata()], tol, c)
    if op == "complex":
        return Case("complex", L.complex, [c.fdata(fdt, sh, "normal"), c.fdata(fdt, sh, "normal")], EXACT, c)
    x, y = cdata(), cdata()
    if op in ("eq", "ne") and c.r.random() < 0.5:
        y = np.where(c.np.random(sh) < 0.5, x, y).astype(x.dtype)
    return Case("complex", bi[op], [x, y], tol, c)


def gen_select_clamp(c):
    op = c.pick("op", ["clamp", "clamp_scalar", "select", "select_n"])
    dt = c.pick("dt", ALL)
    sh = c.shape()
    if op == "clamp" or op == "clamp_scalar":
        if dt == "bool":
            raise Skip()
        bsh = () if op == "clamp_scalar" else sh
        kw = {"specials": 0.1} if is_float(dt) else {}
        lo, x, hi = c.data(dt, bsh, **kw), c.data(dt, sh, **kw), c.data(dt, bsh, **kw)
        return Case("select", lambda a, b, d: lax.clamp(a, b, d), [lo, x, hi], EXACT, c)
    if op == "select":
        p = c.bdata(sh)
        return Case("select", lax.select, [p, c.data(dt, sh), c.data(dt, sh)], EXACT, c)
    n = c.r.randint(1, 4)
    if n == 2 and c.r.random() < 0.5:
        idx = c.bdata(sh)
    else:
        idx = c.np.integers(0, n, size=sh).astype(np.int32)
    cases = [c.data(dt, sh) for _ in range(n)]
    return Case("select", lambda i, *cs: lax.select_n(i, *cs), [idx] + cases, EXACT, c)


def gen_convert(c):
    src = c.pick("src", ALL)
    dst = c.pick("dst", ALL)
    sh = c.shape()
    if is_float(src):
        if dst in INTS:
            info = np.iinfo(npdt(dst))
            lo = max(float(info.min), -1e30)
            hi = min(float(info.max), 1e30)
            # stay inside the target's range (and the source type's)
            fmax = {"f32": 3.4e38, "f64": 1.7e308, "f16": 65504.0, "bf16": 3.38e38}[src]
            lo, hi = max(lo, -fmax), min(hi, fmax)
            scale = c.r.choice([10.0, 1000.0, hi])
            v = c.np.uniform(max(lo, -scale), min(hi, scale), sh)
            x = v.astype(np.float32 if src == "bf16" else npdt(src))
            x = x.astype(npdt(src))
            # rounding into the source type may leave the range: clip again
            xf = x.astype(np.float64)
            bad = (xf >= float(info.max) + 1) | (xf <= float(info.min) - 1)
            x = np.where(bad, 0, x).astype(npdt(src))
        else:
            x = c.fdata(src, sh, "normal", 0.1)
            if c.r.random() < 0.3:
                x = c.fdata(src, sh, "halves", 0.1)
            if c.r.random() < 0.5 and dst in FLOATS and eps_of(dst) > eps_of(src):
                x = _midpoints(c, src, dst, sh)
                if src == "f64":
                    # XLA:CPU rounds f64->f16/bf16 twice (through f32); the
                    # spec rounds once: compare with the correctly rounded value
                    case = Case("convert", lambda a: lax.convert_element_type(a, npdt(dst)),
                                [x], EXACT, c)
                    case.expect = lambda args: [_round_once(args[0], dst)]
                    return case
    else:
        x = c.data(src, sh)
    d = npdt(dst)
    return Case("convert", lambda a: lax.convert_element_type(a, d), [x], EXACT, c)


def _midpoints(c, src, dst, sh):
    """src values at or next to the midpoint of two neighbouring dst values
    (tests single rounding: f64->f16 via f32 rounds twice)."""
    v = c.fdata(dst, sh, "normal").astype(np.float64)
    v = np.where(np.isfinite(v), v, 1.0)
    up = np.abs(v) * eps_of(dst)
    # exact neighbour: step by the dst ulp of v (a power of two)
    e = np.floor(np.log2(np.maximum(np.abs(v), 1e-30)))
    step = np.exp2(e) * eps_of(dst)
    del up
    mid = v + step / 2
    k = c.np.integers(-1, 2, size=sh)  # below, at or above the midpoint
    tiny = np.abs(mid) * eps_of(src) * 4
    return (mid + k * tiny).astype(npdt(src))


def _round_once(x, dst):
    """f64 array x rounded once, to nearest even, to dst (normal range)."""
    if dst != "bf16":
        return x.astype(npdt(dst))
    m, e = np.frexp(x)
    r = np.ldexp(np.round(np.ldexp(m, 8)), e - 8)  # np.round: half to even
    return np.where(np.isfinite(x), r, x).astype(np.float32).astype(npdt(dst))


def _axes(c, rank):
    return tuple(sorted(c.r.sample(range(rank), c.r.randint(0, rank))))


def gen_reduce(c):
    op = c.pick("op", ["sum", "max", "min", "prod", "and", "or"])
    types = {"sum": FLOATS + INTS, "max": ALL, "min": ALL, "prod": FLOATS + INTS,
             "and": INTS + ["bool"], "or": INTS + ["bool"]}[op]
    dt = c.pick("dt", types)
    sh = c.shape()
    axes = _axes(c, len(sh))
    if is_float(dt):
        x = c.fdata(dt, sh, (0.5, 1.6) if op == "prod" else "normal3",
                    0.05 if op in ("max", "min") else 0.0)
    else:
        x = c.data(dt, sh)
    fn = {"sum": lax.reduce_sum, "max": lax.reduce_max, "min": lax.reduce_min,
          "prod": lax.reduce_prod, "and": lax.reduce_and, "or": lax.reduce_or}[op]
    tol = norm(dt, 4) if is_float(dt) and op in ("sum", "prod") else EXACT
    if tol is EXACT and is_float(dt):
        tol = ulp(0)
    return Case("reduce", lambda a: fn(a, axes), [x], tol, c)


def gen_reduce_multi(c):
    dt = c.pick("dt", ["f32", "i32", "f64", "u8", "bf16"])
    dt2 = c.pick("dt2", ["i32", "f32", "i64"])
    sh = c.shape(1)
    axes = _axes(c, len(sh))
    x = c.data(dt, sh, **({"dom": "int"} if is_float(dt) else {}))
    y = c.data(dt2, sh, **({"dom": "int"} if is_float(dt2) else {}))

    def body(a, b):
        # lexicographic max on (x, y): exact and order independent
        take = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] > a[1]))
        return (lax.select(take, b[0], a[0]), lax.select(take, b[1], a[1]))

    def f(p, q):
        lo0 = np.array(-np.inf if is_float(dt) else np.iinfo(npdt(dt)).min, npdt(dt))
        lo1 = np.array(-np.inf if is_float(dt2) else np.iinfo(npdt(dt2)).min, npdt(dt2))
        return lax.reduce((p, q), (lo0, lo1), body, axes)
    return Case("reduce_multi", f, [x, y], EXACT, c)


def gen_argminmax(c):
    op = c.pick("op", ["argmax", "argmin"])
    dt = c.pick("dt", FLOATS + INTS)
    it = c.pick("it", ["i32", "i64"])
    sh = c.shape(1, 4, 1)
    ax = c.r.randrange(len(sh))
    x = c.fdata(dt, sh, "int" if c.r.random() < 0.3 else "normal", 0.05) if is_float(dt) \
        else c.data(dt, sh)
    fn = lax.argmax if op == "argmax" else lax.argmin
    d = npdt(it)
    return Case("argminmax", lambda a: fn(a, ax, d), [x], EXACT, c)


def gen_cumulative(c):
    op = c.pick("op", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
    types = FLOATS if op == "cumlogsumexp" else FLOATS + INTS
    dt = c.pick("dt", types)
    sh = c.shape(1)
    ax = c.r.randrange(len(sh))
    rev = c.r.random() < 0.3
    if is_float(dt):
        x = c.fdata(dt, sh, (0.5, 1.6) if op == "cumprod" else "normal3")
    else:
        x = c.idata(dt, sh, -3, 3) if op == "cumprod" else c.data(dt, sh)
    fn = getattr(lax, op)
    tol = norm(dt, 4) if is_float(dt) and op in ("cumsum", "cumprod", "cumlogsumexp") else EXACT
    return Case("cumulative", lambda a: fn(a, axis=ax, reverse=rev), [x], tol, c)


def gen_dot(c):
    dt = c.pick("dt", ["f32", "f32", "f64", "f16", "bf16", "i32", "i8", "i64",
                       "bf16>f32", "f16>f32", "u8>u32"])
    pref = None
    if ">" in dt:
        dt, p = dt.split(">")
        pref = npdt(p)
    while True:
        nb, nc = c.r.randint(0, 2), c.r.randint(0, 2)
        lf, rf = c.r.randint(0, 2), c.r.randint(0, 2)
        if nb + nc + max(lf, rf) <= c.lim["rank"]:
            break
    bd = [c.dim(1) for _ in range(nb)]
    cd = [c.dim() for _ in range(nc)]
    lfd = [c.dim() for _ in range(lf)]
    rfd = [c.dim() for _ in range(rf)]
    lhs_dims = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(lf)]
    rhs_dims = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("g", i) for i in range(rf)]
    c.r.shuffle(lhs_dims)
    c.r.shuffle(rhs_dims)
    size = {"b": bd, "c": cd, "f": lfd, "g": rfd}
    lsh = tuple(size[k][i] for k, i in lhs_dims)
    rsh = tuple(size[k][i] for k, i in rhs_dims)
    lb = tuple(lhs_dims.index(("b", i)) for i in range(nb))
    rb = tuple(rhs_dims.index(("b", i)) for i in range(nb))
    lc = tuple(lhs_dims.index(("c", i)) for i in range(nc))
    rc = tuple(rhs_dims.index(("c", i)) for i in range(nc))
    dn = ((lc, rc), (lb, rb))
    if dt == "i8":
        pref = np.int32
        x, y = c.idata("i8", lsh, -20, 20), c.idata("i8", rsh, -20, 20)
    else:
        x, y = c.data(dt, lsh, **({"dom": "normal3"} if is_float(dt) else {})), \
            c.data(dt, rsh, **({"dom": "normal3"} if is_float(dt) else {}))
    tol = norm(dt, 2) if is_float(dt) else EXACT
    return Case("dot", lambda a, b: lax.dot_general(a, b, dn, preferred_element_type=pref),
                [x, y], tol, c)


def gen_conv(c):
    dt = c.pick("dt", ["f32", "f32", "f64", "f16", "bf16"])
    ns = c.r.randint(1, max(1, min(3, c.lim["rank"] - 2)))
    groups = c.pick("groups", ["none", "feature", "batch"])
    g = c.r.randint(2, 3) if groups != "none" else 1
    fg = g if groups == "feature" else 1
    bg = g if groups == "batch" else 1
    n = bg * c.r.randint(1 if bg > 1 else 0, 2)
    ci = fg * c.r.randint(1, 3)
    co = g * c.r.randint(1, 2)
    ks, ins, strides, pads, ldil, rdil = [], [], [], [], [], []
    for _ in range(ns):
        k = c.r.randint(1, 3)
        rd = c.r.choice([1, 1, 2])
        ld = c.r.choice([1, 1, 2])
        i = c.r.randint(1, max(1, c.lim["dim"]) + 2)
        lo, hi = c.r.randint(-1, 2), c.r.randint(-1, 2)
        kd = (k - 1) * rd + 1
        idl = (i - 1) * ld + 1
        if idl + lo + hi < kd:
            hi = kd - idl - lo
        ks.append(k); ins.append(i); strides.append(c.r.choice([1, 1, 2, 3]))
        pads.append((lo, hi)); ldil.append(ld); rdil.append(rd)
    sp = "DHW"[3 - ns:]
    lhs = list("NC"); rhs = list("OI"); out = list("NC")
    for spec in (lhs, rhs, out):
        for ch in sp:
            spec.insert(c.r.randint(0, len(spec)), ch)
    # keep spatial letters in order (lax requires the same order everywhere)
    def fix_order(s):
        it = iter(sp)
        return "".join(next(it) if ch in sp else ch for ch in s)
    lhs, rhs, out = fix_order(lhs), fix_order(rhs), fix_order(out)
    dims_l = {"N": n, "C": ci}
    dims_r = {"O": co, "I": ci // fg}
    for j, ch in enumerate(sp):
        dims_l[ch] = ins[j]
        dims_r[ch] = ks[j]
    x = c.fdata(dt, tuple(dims_l[ch] for ch in lhs), "normal3")
    w = c.fdata(dt, tuple(dims_r[ch] for ch in rhs), "normal3")
    dn = (lhs, rhs, out)
    case = Case("conv", lambda a, b: lax.conv_general_dilated(
        a, b, strides, pads, lhs_dilation=ldil, rhs_dilation=rdil, dimension_numbers=dn,
        feature_group_count=fg, batch_group_count=bg), [x, w], norm(dt, 2), c)
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        # XLA:CPU miscomputes convolutions with negative padding (reads
        # outside the input): expect the spec's rule instead, i.e. dilate and
        # pad the input explicitly (lax.pad), then convolve without padding.
        cfg = [(0, 0, 0)] * len(lhs)
        for j, ch in enumerate(sp):
            cfg[lhs.index(ch)] = (pads[j][0], pads[j][1], ldil[j] - 1)

        def ref(a, b):
            a = lax.pad(a, np.array(0, a.dtype), cfg)
            return lax.conv_general_dilated(
                a, b, strides, [(0, 0)] * ns, rhs_dilation=rdil, dimension_numbers=dn,
                feature_group_count=fg, batch_group_count=bg)
        case.expect = lambda args: [np.asarray(jax.jit(ref)(*args))]
    return case


def _factor_shape(c, total, rank):
    if rank == 0:
        return () if total == 1 else None
    dims = [1] * rank
    t = total
    if t == 0:
        dims[c.r.randrange(rank)] = 0
        for i in range(rank):
            if dims[i] != 0:
                dims[i] = c.r.randint(1, 3)
        return tuple(dims)
    p = 2
    factors = []
    while t > 1:
        while t % p == 0:
            factors.append(p)
            t //= p
        p += 1
    for f in factors:
        dims[c.r.randrange(rank)] *= f
    return tuple(dims)


def _movement(c, x, op):
    """One data-movement op on x (a jax value at trace time, shape known)."""
    sh = x.shape
    r = len(sh)
    if op == "transpose":
        perm = list(range(r)); c.r.shuffle(perm)
        return lax.transpose(x, perm)
    if op == "reshape":
        total = int(np.prod(sh, dtype=np.int64))
        for _ in range(10):
            ns = _factor_shape(c, total, c.rank())
            if ns is not None:
                return lax.reshape(x, ns)
        return x
    if op == "broadcast":
        R = c.r.randint(r, min(4, r + 2)) if r < 4 else r
        dims = sorted(c.r.sample(range(R), r))
        out = [c.dim(1) for _ in range(R)]
        for i, d in enumerate(dims):
            out[d] = sh[i] if sh[i] != 1 or c.r.random() < 0.5 else out[d]
        return lax.broadcast_in_dim(x, tuple(out), tuple(dims))
    if op == "slice":
        st, lim_, strd = [], [], []
        for d in sh:
            a = c.r.randint(0, d); b = c.r.randint(a, d)
            st.append(a); lim_.append(b); strd.append(c.r.randint(1, 3))
        return lax.slice(x, st, lim_, strd)
    if op == "pad":
        cfg = []
        for d in sh:
            while True:
                lo, hi, it = c.r.randint(-2, 3), c.r.randint(-2, 3), c.r.randint(0, 2)
                if lo + hi + d + max(d - 1, 0) * it >= 0:
                    break
            cfg.append((lo, hi, it))
        return lax.pad(x, jnp.array(7, x.dtype), cfg)
    if op == "rev":
        return lax.rev(x, tuple(_axes(c, r)))
    if op == "concat":
        if r == 0:
            return x
        ax = c.r.randrange(r)
        return lax.concatenate([x, lax.rev(x, (ax,)), x], ax)
    raise ValueError(op)


MOVES = ["transpose", "reshape", "broadcast", "slice", "pad", "rev", "concat"]


def gen_movement(c):
    op = c.pick("op", MOVES)
    dt = c.pick("dt", ALL)
    x = c.data(dt, c.shape(), **({"specials": 0.1} if is_float(dt) else {}))
    seed = c.r.getrandbits(32)
    if op == "pad":
        pv = c.data(dt, ())
        cfg = []
        for d in x.shape:
            while True:
                lo, hi, it = c.r.randint(-2, 3), c.r.randint(-2, 3), c.r.randint(0, 2)
                if lo + hi + d + max(d - 1, 0) * it >= 0:
                    break
            cfg.append((lo, hi, it))
        return Case("move", lambda a, p: lax.pad(a, p, cfg), [x, pv], EXACT, c)

    def f(a):
        c2 = Ctx(random.Random(seed), c.lim, {})
        return _movement(c2, a, op)
    return Case("move", f, [x], EXACT, c)


def gen_chain(c):
    dt = c.pick("dt", ["i32", "f32", "bf16", "u8", "bool"])
    x = c.data(dt, c.shape())
    ops = [c.r.choice(MOVES) for _ in range(c.r.randint(1, max(1, c.lim["ops"])))]
    seed = c.r.getrandbits(32)

    def f(a):
        c2 = Ctx(random.Random(seed), c.lim, {})
        for op in ops:
            if int(np.prod(a.shape, dtype=np.int64)) > 4096:
                break
            a = _movement(c2, a, op)
        return a
    return Case("chain", f, [x], EXACT, c)


def gen_dynamic(c):
    op = c.pick("op", ["dynamic_slice", "dynamic_update_slice"])
    dt = c.pick("dt", ALL)
    it = c.pick("it", ["i32", "i64", "u8"])
    sh = c.shape(1)
    x = c.data(dt, sh)
    sizes = [c.r.randint(0, d) for d in sh]
    lo = -3 if it != "u8" else 0
    starts = [np.array(c.r.randint(lo, d + 3), dtype=npdt(it)) for d in sh]
    if op == "dynamic_slice":
        return Case("dynamic", lambda a, *s: lax.dynamic_slice(a, s, sizes),
                    [x] + starts, EXACT, c)
    u = c.data(dt, tuple(sizes))
    return Case("dynamic", lambda a, b, *s: lax.dynamic_update_slice(a, b, s),
                [x, u] + starts, EXACT, c)


def gen_concat_iota(c):
    op = c.pick("op", ["concatenate", "iota", "rev"])
    dt = c.pick("dt", ALL)
    sh = c.shape(1)
    ax = c.r.randrange(len(sh))
    if op == "concatenate":
        args = []
        for _ in range(c.r.randint(1, 3)):
            s = list(sh); s[ax] = c.dim()
            args.append(c.data(dt, tuple(s)))
        return Case("concat", lambda *a: lax.concatenate(a, ax), args, EXACT, c)
    if op == "rev":
        dims = _axes(c, len(sh))
        return Case("concat", lambda a: lax.rev(a, dims), [c.data(dt, sh)], EXACT, c)
    if dt == "bool":
        raise Skip()
    d = npdt(dt)
    x = c.data(dt, sh)
    return Case("concat", lambda a: (lax.broadcasted_iota(d, sh, ax), a), [x], EXACT, c)


def gen_gather(c):
    op = c.pick("op", ["get", "get2", "get_slice", "add", "set", "max", "min", "mul"])
    dt = c.pick("dt", ["f32", "i32", "bf16", "f64", "i8", "u32", "f16"])
    mode = c.pick("mode", [None, "clip", "fill", "drop"])
    if op.startswith("get") and mode == "drop":
        mode = "fill"
    if not op.startswith("get") and mode == "fill":
        mode = "drop"
    sh = c.shape(1 if op != "get2" else 2, 4, 1)
    x = c.data(dt, sh)
    ish = c.shape(0, 2)
    oob = mode is not None and c.r.random() < 0.5
    d0 = sh[0]
    if op == "set":
        ish = (c.r.randint(0, d0),)
        idx = np.array(c.r.sample(range(d0), ish[0]), dtype=np.int32)
        if c.r.random() < 0.5:
            idx = np.where(c.np.random(ish) < 0.5, idx - d0, idx).astype(np.int32)
    else:
        lo, hi = (-d0 - 2, d0 + 2) if oob else (-d0, d0 - 1)
        idx = c.np.integers(lo, hi, size=ish, endpoint=True).astype(np.int32)
    kw = {} if mode is None else {"mode": mode}
    if op == "get":
        return Case("gather", lambda a, i: a.at[i].get(**kw), [x, idx], EXACT, c)
    if op == "get2":
        d1 = sh[1]
        lo, hi = (-d1 - 2, d1 + 2) if oob else (-d1, d1 - 1)
        idx2 = c.np.integers(lo, hi, size=ish, endpoint=True).astype(np.int32)
        if c.r.random() < 0.5:
            return Case("gather", lambda a, i, j: a.at[:, i, ...].get(**kw) if a.ndim > 2
                        else a.at[i, j].get(**kw), [x, idx, idx2], EXACT, c)
        return Case("gather", lambda a, i, j: a.at[i, j].get(**kw), [x, idx, idx2], EXACT, c)
    if op == "get_slice":
        s0 = c.r.randint(0, d0)
        return Case("gather", lambda a, i: a[s0:, ...].at[i].get(**kw) if s0 < d0 else a,
                    [x, idx], EXACT, c)
    ush = tuple(ish) + tuple(sh[1:])
    u = c.data(dt, ush)
    if op == "mul" and is_float(dt):
        u = c.fdata(dt, ush, (0.5, 1.5))
    fn = {"add": lambda a, i, v: a.at[i].add(v, **kw), "set": lambda a, i, v: a.at[i].set(v, **kw),
          "max": lambda a, i, v: a.at[i].max(v, **kw), "min": lambda a, i, v: a.at[i].min(v, **kw),
          "mul": lambda a, i, v: a.at[i].multiply(v, **kw)}[op]
    tol = norm(dt, 4) if is_float(dt) and op in ("add", "mul") else EXACT
    return Case("scatter", fn, [x, idx, u], tol, c)


def gen_vmap_gather(c):
    op = c.pick("op", ["get", "add", "set", "max"])
    dt = c.pick("dt", ["f32", "i32", "bf16", "i64"])
    nb = c.r.randint(1, 2)
    bsh = tuple(c.dim(1) for _ in range(nb))
    sh = bsh + c.shape(1, 2, 1)
    x = c.data(dt, sh)
    d0 = sh[nb]
    ish = bsh + c.shape(0, 1)
    if op == "set":
        n = c.r.randint(0, d0)
        ish = bsh + (n,)
        idx = np.stack([np.array(c.r.sample(range(d0), n), np.int32)
                        for _ in range(int(np.prod(bsh)))]).reshape(ish)
    else:
        idx = c.np.integers(-d0, d0 - 1, size=ish, endpoint=True).astype(np.int32)

    def inner(a, i, *u):
        if op == "get":
            return a[i]
        if op == "add":
            return a.at[i].add(u[0])
        if op == "set":
            return a.at[i].set(u[0])
        return a.at[i].max(u[0])
    f = inner
    for _ in range(nb):
        f = jax.vmap(f)
    if op == "get":
        return Case("vgather", f, [x, idx], EXACT, c)
    u = c.data(dt, ish + sh[nb + 1:])
    tol = norm(dt, 4) if is_float(dt) and op == "add" else EXACT
    return Case("vgather", f, [x, idx, u], tol, c)


def gen_sort(c):
    op = c.pick("op", ["sort", "sort_multi", "top_k"])
    dt = c.pick("dt", FLOATS + INTS + (["bool"] if op != "top_k" else []))
    sh = c.shape(1)
    ax = c.r.randrange(len(sh))
    if is_float(dt):
        x = c.fdata(dt, sh, "int" if c.r.random() < 0.5 else "normal",
                    0.0 if op == "top_k" else 0.1)
    elif dt == "bool":
        x = c.bdata(sh)
    else:
        x = c.idata(dt, sh, -3, 3) if c.r.random() < 0.5 else c.data(dt, sh)
    if op == "top_k":
        k = c.r.randint(0, sh[-1])
        return Case("sort", lambda a: lax.top_k(a, k), [x], EXACT, c)
    if op == "sort":
        return Case("sort", lambda a: lax.sort(a, dimension=ax, is_stable=True), [x], EXACT, c)
    dt2 = c.pick("dt2", ["i32", "f32", "u8"])
    ys = [c.data(dt2, sh) for _ in range(c.r.randint(1, 2))]
    nk = c.r.randint(1, 1 + len(ys))
    return Case("sort", lambda *a: lax.sort(a, dimension=ax, is_stable=True, num_keys=nk),
                [x] + ys, EXACT, c)


def gen_bitcast(c):
    src = c.pick("src", ["f32", "i32", "u32", "f64", "i64", "f16", "i16", "bf16", "u8", "i8"])
    width = {"f32": 4, "i32": 4, "u32": 4, "f64": 8, "i64": 8, "f16": 2, "i16": 2,
             "bf16": 2, "u8": 1, "i8": 1}
    dst = c.pick("dst", sorted(width))
    ws, wd = width[src], width[dst]
    sh = list(c.shape(0, 3))
    if ws < wd:
        sh.append(wd // ws)
    x = c.data(src, tuple(sh), **({"specials": 0.1} if is_float(src) else {}))
    d = npdt(dst)
    if is_float(dst) and ws == wd:
        # avoid producing NaNs whose payload XLA may canonicalise
        y = x.view(d)
        bad = np.isnan(y.astype(np.float32))
        x = np.where(bad, np.zeros_like(x), x)
    if is_float(dst) and ws != wd:
        raise Skip()
    return Case("bitcast", lambda a: lax.bitcast_convert_type(a, d), [x], EXACT, c)


def gen_rng(c):
    alg = c.pick("alg", ["THREE_FRY", "PHILOX"])
    dt = c.pick("dt", ["u32", "u64", "u8", "u16"])
    sh = c.shape(0, 3)
    key = c.np.integers(0, 2 ** 32 - 1, size=(4,), dtype=np.uint32)
    a = getattr(lax.RandomAlgorithm, "RNG_" + alg)
    d = npdt(dt)
    return Case("rng", lambda k: lax.rng_bit_generator(k, sh, dtype=d, algorithm=a),
                [key], EXACT, c)


def gen_control(c):
    op = c.pick("op", ["while", "fori", "cond", "switch"])
    dt = c.pick("dt", ["f32", "i32", "f64", "i64", "bf16"])
    sh = c.shape(0, 3)
    x = c.data(dt, sh, **({"dom": "normal3"} if is_float(dt) else {}))
    if is_float(dt):
        half = np.array(0.5, npdt(dt))
        body = lambda v: v * half + lax.sin(v)
        tol = norm(dt)
    else:
        body = lambda v: v * 3 + 1
        tol = EXACT
    if op == "while":
        n = np.array(c.r.randint(0, 5), np.int32)

        def f(a, k):
            return lax.while_loop(lambda s: s[0] < k, lambda s: (s[0] + 1, body(s[1])),
                                  (np.int32(0), a))
        return Case("control", f, [x, n], tol, c)
    if op == "fori":
        n = c.r.randint(0, 4)
        return Case("control", lambda a: lax.fori_loop(0, n, lambda i, v: body(v) + i.astype(v.dtype), a),
                    [x], tol, c)
    if op == "cond":
        p = np.array(c.r.random() < 0.5)
        return Case("control", lambda q, a: lax.cond(q, body, lambda v: v - v * v, a),
                    [p, x], tol, c)
    i = np.array(c.r.randint(-2, 4), np.int32)
    brs = [body, lambda v: -v, lambda v: v * v, lambda v: v + v]
    return Case("control", lambda k, a: lax.switch(k, brs, a), [i, x], tol, c)


def gen_linalg(c):
    op = c.pick("op", ["cholesky", "triangular_solve"])
    dt = c.pick("dt", ["f32", "f64"])
    batch = c.shape(0, max(0, min(2, c.lim["rank"] - 2)), 1)
    n = c.r.randint(1, max(1, min(6, c.lim["dim"] + 1)))
    if op == "cholesky":
        b = c.fdata(dt, batch + (n, n), "normal3").astype(np.float64)
        a = b @ np.swapaxes(b, -1, -2) + n * np.eye(n)
        a = a.astype(npdt(dt))
        return Case("linalg", lambda m: jnp.linalg.cholesky(m), [a], norm(dt, 10), c)
    left = c.r.random() < 0.5
    lower = c.r.random() < 0.5
    trans = c.r.random() < 0.5
    unit = c.r.random() < 0.3
    a = c.fdata(dt, batch + (n, n), "normal3").astype(np.float64) * 0.3
    a = a + np.eye(n) * (2.0 + n)
    a = a.astype(npdt(dt))
    m = c.dim(1)
    b = c.fdata(dt, batch + ((n, m) if left else (m, n)), "normal3")
    return Case("linalg", lambda p, q: lax.linalg.triangular_solve(
        p, q, left_side=left, lower=lower, transpose_a=trans, unit_diagonal=unit),
        [a, b], norm(dt, 10), c)


def gen_fft(c):
    op = c.pick("op", ["fft", "ifft", "rfft", "irfft"])
    dt = c.pick("dt", ["f32", "f64"])
    nd = c.r.randint(1, min(3, max(1, c.lim["rank"])))
    sh = c.shape(nd, 4, 1)
    axes = tuple(range(len(sh) - nd, len(sh)))
    x = c.fdata(dt, sh, "normal3")
    cdt = "c64" if dt == "f32" else "c128"
    if op in ("fft", "ifft"):
        y = c.fdata(dt, sh, "normal3")
        z = (x + 1j * y).astype(npdt(cdt))
        fn = jnp.fft.fftn if op == "fft" else jnp.fft.ifftn
        return Case("fft", lambda a: fn(a, axes=axes), [z], norm(cdt, 4), c)
    if op == "rfft":
        return Case("fft", lambda a: jnp.fft.rfftn(a, axes=axes), [x], norm(cdt, 4), c)
    s = tuple(sh[a] for a in axes)
    return Case("fft", lambda a: jnp.fft.irfftn(jnp.fft.rfftn(a, axes=axes) * 2, s=s, axes=axes),
                [x], norm(cdt, 4), c)


def gen_window(c):
    op = c.pick("op", ["max", "sum", "min", "maxpool_grad"])
    dt = c.pick("dt", ["f32", "f64", "i32", "bf16"] if op != "maxpool_grad" else ["f32", "f64"])
    sh = c.shape(1, 4, 1)
    r = len(sh)
    win = [c.r.randint(1, min(3, d)) for d in sh]
    strides = [c.r.randint(1, 2) for _ in sh]
    x = c.data(dt, sh, **({"dom": "normal3"} if is_float(dt) else {}))
    if op == "maxpool_grad":
        padding = c.r.choice(["VALID", "SAME"])

        def f(a):
            return jax.grad(lambda t: jnp.sum(jnp.sin(lax.reduce_window(
                t, -jnp.inf, lax.max, win, strides, padding))))(a)
        return Case("window", f, [x], norm(dt, 4), c)
    pads = [(c.r.randint(0, 1), c.r.randint(0, 1)) for _ in sh]
    bd = [c.r.choice([1, 1, 2]) for _ in sh]
    wd = [c.r.choice([1, 1, 2]) for _ in sh]
    fn = {"max": lax.max, "sum": lax.add, "min": lax.min}[op]
    if is_float(dt):
        init = {"max": -np.inf, "min": np.inf, "sum": 0.0}[op]
    else:
        info = np.iinfo(npdt(dt))
        init = {"max": info.min, "min": info.max, "sum": 0}[op]
    init = np.array(init, npdt(dt))
    tol = norm(dt, 4) if is_float(dt) and op == "sum" else EXACT
    _ = r
    return Case("window", lambda a: lax.reduce_window(a, init, fn, win, strides, pads, bd, wd),
                [x], tol, c)


def gen_composite(c):
    """jnp / jax.nn level functions: several ops, custom calls, real workloads."""
    op = c.pick("op", ["softmax", "logsumexp", "var", "gelu", "einsum", "solve", "inv",
                       "det", "qr", "eigh", "median", "searchsorted", "norm", "layernorm"])
    dt = c.pick("dt", ["f32", "f64"])
    tol = norm(dt, 20)
    if op in ("solve", "inv", "det", "qr", "eigh"):
        batch = c.shape(0, max(0, min(2, c.lim["rank"] - 2)), 1)
        n = c.r.randint(1, max(1, min(5, c.lim["dim"])))
        a = c.fdata(dt, batch + (n, n), "normal3").astype(np.float64)
        if op == "eigh":
            a = a + np.swapaxes(a, -1, -2)
        else:
            a = a + np.eye(n) * 3.0
        a = a.astype(npdt(dt))
        if op == "solve":
            b = c.fdata(dt, batch + (n, c.dim(1)), "normal3")
            return Case("composite", jnp.linalg.solve, [a, b], tol, c)
        if op == "inv":
            return Case("composite", jnp.linalg.inv, [a], tol, c)
        if op == "det":
            return Case("composite", jnp.linalg.det, [a], tol, c)
        if op == "qr":
            # signs of Q's columns / R's rows are a convention: compare |R|, Q R
            return Case("composite", lambda m: (lambda q, r: (jnp.abs(r), q @ r))(
                *jnp.linalg.qr(m)), [a], tol, c)
        return Case("composite", lambda m: jnp.linalg.eigh(m)[0], [a], tol, c)
    sh = c.shape(1)
    ax = c.r.randrange(len(sh))
    x = c.fdata(dt, sh, "normal3")
    if op == "softmax":
        return Case("composite", lambda v: jax.nn.softmax(v, axis=ax), [x], tol, c)
    if op == "logsumexp":
        return Case("composite", lambda v: jax.nn.logsumexp(v, axis=ax), [x], tol, c)
    if op == "var":
        return Case("composite", lambda v: jnp.var(v, axis=ax), [x], tol, c)
    if op == "gelu":
        approx = c.r.random() < 0.5
        return Case("composite", lambda v: jax.nn.gelu(v, approximate=approx), [x], tol, c)
    if op == "median":
        return Case("composite", lambda v: jnp.median(v, axis=ax), [x], tol, c)
    if op == "norm":
        return Case("composite", lambda v: jnp.linalg.norm(v, axis=ax), [x], tol, c)
    if op == "layernorm":
        return Case("composite", lambda v: (v - v.mean(-1, keepdims=True)) *
                    lax.rsqrt(v.var(-1, keepdims=True) + 1e-5), [x], tol, c)
    if op == "searchsorted":
        srt = np.sort(c.fdata(dt, (c.dim(1),), "normal3"))
        side = c.r.choice(["left", "right"])
        return Case("composite", lambda s_, v: jnp.searchsorted(s_, v, side=side),
                    [srt, x], EXACT, c)
    a = c.fdata(dt, (c.dim(1), c.dim(1), c.dim(1)), "normal3")
    b = c.fdata(dt, (a.shape[2], c.dim(1)), "normal3")
    return Case("composite", lambda p, q: jnp.einsum("ijk,kl->lji", p, q), [a, b], tol, c)


GENERATORS = {
    "unary_f": (gen_unary_float, 14), "complex": (gen_complex, 5), "unary_i": (gen_unary_int, 4),
    "binary": (gen_binary, 14), "select": (gen_select_clamp, 4),
    "convert": (gen_convert, 10), "reduce": (gen_reduce, 6), "reduce_multi": (gen_reduce_multi, 2),
    "argminmax": (gen_argminmax, 3), "cumulative": (gen_cumulative, 3),
    "dot": (gen_dot, 6), "conv": (gen_conv, 6), "move": (gen_movement, 7),
    "chain": (gen_chain, 4), "dynamic": (gen_dynamic, 3), "concat": (gen_concat_iota, 3),
    "gather": (gen_gather, 6), "vgather": (gen_vmap_gather, 3), "sort": (gen_sort, 4), "bitcast": (gen_bitcast, 2),
    "rng": (gen_rng, 2), "control": (gen_control, 3), "linalg": (gen_linalg, 2),
    "fft": (gen_fft, 2), "composite": (gen_composite, 4), "window": (gen_window, 3),
}

DEFAULT_LIM = {"rank": 4, "dim": 5, "ops": 4}


def generate(r, lim, fix, kinds):
    """Case from random state r; kind chosen by weight unless fixed."""
    if "kind" in fix:
        kind = fix["kind"]
    else:
        ks = sorted(kinds)
        kind = r.choices(ks, weights=[GENERATORS[k][1] for k in ks])[0]
    c = Ctx(r, lim, fix)
    case = GENERATORS[kind][0](c)
    case.choices["kind"] = kind
    return case


