#!/usr/bin/env python3
"""gen_dynamic.py — tests/jax/dynamic/: programs with dynamic shapes.

Each case is a function exported with jax.export and symbolic dimensions
(`jax.export.symbolic_shape("b, 3")`), so its StableHLO (`exp.mlir_module()`)
has `tensor<?x3xf32>` arguments, get_dimension_size, dynamic_* ops, calls with
`jax.global_constant` dimension arguments and `shape_assertion` custom calls.
hlo refines the shapes from the inputs (refine-shapes) and runs it. Every
program is written once per concrete size as CASE_<size>/ (the same
program.mlir, three sizes each); expected values come from `exp.call(...)`
on XLA:CPU. Cases cover the kinds of op that carry dynamic shapes: calls,
stablehlo.composite (erf, gelu, asinh..., top_k: refined through their
decomposition functions), fft, while loops and lax.scan (a slice at the loop
counter: real_dynamic_slice with a dynamic start but a static size), custom
calls whose result shapes are shape operands (LAPACK's potrf). The `*_bad_*` cases expect an error: a failing shape assertion
(JAX's own message, formatted with the sizes) or an input that does not fit
the argument type (hlo's message naming the argument and the dimension).

usage: python3 tests/jax/gen_dynamic.py   (pip jax; writes tests/jax/dynamic/)
"""
import os
import shutil

import jax
import jax.numpy as jnp
import numpy as np
from jax import export, lax

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dynamic")
rng = np.random.default_rng(0)


def export_fn(f, specs):
    scope = export.SymbolicScope()
    args = [jax.ShapeDtypeStruct(export.symbolic_shape(s, scope=scope)
                                 if isinstance(s, str) else s, d) for s, d in specs]
    return export.export(jax.jit(f))(*args)


def write_case(name, exp, inputs, expect_error=None, cmp=None):
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "inputs"))
    with open(os.path.join(d, "program.mlir"), "w") as fh:
        fh.write(exp.mlir_module())
    for k, x in enumerate(inputs):
        np.save(os.path.join(d, "inputs", f"arg{k}.npy"), x)
    if expect_error is not None:
        with open(os.path.join(d, "expect_error"), "w") as fh:
            fh.write(expect_error + "\n")
        return
    outs = exp.call(*inputs)
    outs = outs if isinstance(outs, (tuple, list)) else [outs]
    os.makedirs(os.path.join(d, "expected"))
    for k, y in enumerate(outs):
        np.save(os.path.join(d, "expected", f"out{k}.npy"), np.asarray(y))
    if cmp:
        with open(os.path.join(d, "cmp"), "w") as fh:
            fh.write(cmp + "\n")


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# name: (function, symbolic specs, inputs per size (a function of the size))
CASES = {
    # a two-layer MLP over a dynamic batch
    "mlp": (lambda x, w1, w2: jnp.tanh(x @ w1) @ w2,
            [("b, 3", jnp.float32), ((3, 4), jnp.float32), ((4, 2), jnp.float32)],
            lambda n: [f32(n, 3), f32(3, 4), f32(4, 2)]),
    # reductions: max over the dynamic axis plus a mean (b converted to f32)
    "reduce": (lambda x: jnp.max(x, axis=0) + x.mean(),
               [("b, 4", jnp.float32)], lambda n: [f32(n, 4)]),
    # concatenate along the dynamic axis (result 2*b rows)
    "concat": (lambda x: jnp.concatenate([x, 2 * x]),
               [("b, 3", jnp.float32)], lambda n: [f32(n, 3)]),
    # gather rows of x by n indices (two symbols)
    "gather": (lambda x, i: x[i],
               [("b, 3", jnp.float32), ("n", jnp.int32)],
               lambda n: [f32(n, 3), rng.integers(0, n, size=n + 1).astype(np.int32)]),
    # a while loop whose trip count is the dynamic size
    "while": (lambda x: lax.fori_loop(0, x.shape[0], lambda i, c: c * 0.5 + x[i],
                                      jnp.zeros(x.shape[1:], x.dtype)),
              [("b, 3", jnp.float32)], lambda n: [f32(n, 3)]),
    # convolution over dynamic batch and height (SAME padding)
    "conv": (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME"),
             [("n, 2, h, 5", jnp.float32), ((3, 2, 3, 3), jnp.float32)],
             lambda n: [f32(n, 2, n + 2, 5), f32(3, 2, 3, 3)]),
    # x + arange(b): dynamic_iota, dynamic_broadcast_in_dim
    "arange": (lambda x: x + jnp.arange(x.shape[0], dtype=jnp.float32),
               [("b", jnp.float32)], lambda n: [f32(n)]),
    # pad by (1, 2)
    "pad": (lambda x: jnp.pad(x, ((1, 2),)), [("b", jnp.float32)], lambda n: [f32(n)]),
    # strided slice x[1:-1:2]: floor division on dimension sizes, dynamic_iota + gather
    "slice": (lambda x: x[1:-1:2], [("b", jnp.float32)], lambda n: [f32(n + 2)]),
    # symbolic expressions: b+1 elements of a concatenation (dynamic_gather)
    "expr": (lambda x: jnp.concatenate([x, x, jnp.ones((1,), x.dtype)])[: x.shape[0] + 1],
             [("b", jnp.float32)], lambda n: [f32(n)]),
    # a 2*b argument reshaped to (2, b): dynamic_reshape
    "even": (lambda x: x.reshape(2, -1).sum(0), [("2*b", jnp.float32)],
             lambda n: [f32(2 * n)]),
    # matmul over two symbols b, n
    "multi": (lambda x, y: x @ y, [("b, n", jnp.float32), ("n, 2", jnp.float32)],
              lambda n: [f32(n, n + 1), f32(n + 1, 2)]),
    # cumulative sum over the dynamic axis: reduce_window
    "cumsum": (lambda x: jnp.cumsum(x, axis=0), [("b, 2", jnp.float32)],
               lambda n: [f32(n, 2)]),
    # sort along the dynamic axis, argmax (variadic reduce)
    "sort_argmax": (lambda x: (jnp.sort(x), jnp.argmax(x)), [("b", jnp.float32)],
                    lambda n: [f32(n)]),
    # stablehlo.composite with a dynamic shape (refined through its
    # decomposition function): the exact gelu, x/2 (1 + erf(x/sqrt 2)), whose
    # erf is a chlo.erf composite
    "gelu": (lambda x: jax.nn.gelu(x, approximate=False), [("b", jnp.float32)],
             lambda n: [f32(n)]),
    # composites of chlo.asinh / acosh / atanh / sinh over two symbols
    "hyperbolic": (lambda x: jnp.arcsinh(x) + jnp.sinh(x) + jnp.arccosh(jnp.abs(x) + 1)
                   + jnp.arctanh(0.5 * jnp.tanh(x)),
                   [("b, c", jnp.float32)], lambda n: [f32(n, n + 1)]),
    # lax.top_k: a chlo.top_k composite with two results (values, indices)
    "top_k": (lambda x: lax.top_k(x, 2), [("b, 5", jnp.float32)], lambda n: [f32(n, 5)]),
    # stablehlo.fft over a dynamic batch: FFT, RFFT and IRFFT (complex results
    # compared as stacked real and imaginary parts)
    "fft": (lambda x: (jnp.stack([jnp.fft.fft(x).real, jnp.fft.fft(x).imag]),
                       jnp.stack([jnp.fft.rfft(x).real, jnp.fft.rfft(x).imag]),
                       jnp.fft.irfft(jnp.fft.rfft(x), 8)),
            [("b, 8", jnp.float32)], lambda n: [f32(n, 8)]),
    # lax.scan over xs of shape (b, c), both symbolic: the slice at the loop
    # counter is a real_dynamic_slice whose start is not a constant but whose
    # limit - start is [1, c]
    "scan_2sym": (lambda xs: lax.scan(lambda h, x: (h + x, 2 * h), jnp.zeros(xs.shape[1:]), xs),
                  [("b, c", jnp.float32)], lambda n: [f32(n, n + 2)]),
    # the gradient of a scan (the backward scan slices and updates at the counter)
    "grad_scan": (jax.grad(lambda w, xs: lax.scan(lambda h, x: (jnp.tanh(h * w + x), None),
                                                  jnp.zeros(xs.shape[1:]), xs)[0].sum()),
                  [("c", jnp.float32), ("b, c", jnp.float32)],
                  lambda n: [f32(n + 1), f32(n, n + 1)]),
    # a LAPACK custom call (potrf) over a dynamic batch: its result shapes
    # come from shape operands (indices_of_shape_operands)
    "cholesky": (lambda x: jnp.linalg.cholesky(x @ jnp.swapaxes(x, -1, -2) + 3 * jnp.eye(3)),
                 [("b, 3, 3", jnp.float32)], lambda n: [f32(n, 3, 3)]),
}
SIZES = (1, 3, 7)
# comparison tolerances other than the default --rtol 1e-5 (float32 math
# whose order of operations differs from XLA's)
CMP = {"fft": "--rtol 1e-4", "cholesky": "--rtol 1e-4", "grad_scan": "--rtol 1e-4", "hyperbolic": "--rtol 1e-4"}


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    for name, (f, specs, make) in CASES.items():
        exp = export_fn(f, specs)
        for n in SIZES:
            write_case(f"{name}_{n}", exp, make(n), cmp=CMP.get(name, "--rtol 1e-5"))
    # a failing shape assertion: b >= 1 with b = 0 (JAX's message, sizes filled in)
    exp = export_fn(CASES["mlp"][0], CASES["mlp"][1])
    write_case("mlp_bad_empty", exp, [f32(0, 3), f32(3, 4), f32(4, 2)],
               expect_error="Expected value >= 1 for dimension variable 'b'")
    # 2*b with an odd size: JAX's divisibility assertion
    exp = export_fn(CASES["even"][0], CASES["even"][1])
    write_case("even_bad_odd", exp, [f32(5)],
               expect_error="Division had remainder 1 when computing the value of 'b'")
    # b, n used twice: the second argument's n disagrees with the first's
    exp = export_fn(CASES["multi"][0], CASES["multi"][1])
    write_case("multi_bad_mismatch", exp, [f32(2, 3), f32(4, 2)],
               expect_error="Found inconsistency between dimension size args[1].shape[0] (= 4)")
    # an input whose static dimension does not fit: hlo names argument and dimension
    write_case("mlp_bad_static_dim", export_fn(CASES["mlp"][0], CASES["mlp"][1]),
               [f32(2, 5), f32(3, 4), f32(4, 2)],
               expect_error="dimension 1 must be 3, not 5")
    # wrong rank
    write_case("mlp_bad_rank", export_fn(CASES["mlp"][0], CASES["mlp"][1]),
               [f32(6), f32(3, 4), f32(4, 2)],
               expect_error="argument 0 of @main is tensor<?x3xf32>")


if __name__ == "__main__":
    main()
