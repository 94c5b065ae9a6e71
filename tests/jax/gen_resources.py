#!/usr/bin/env python3
"""gen_resources.py — tests/jax/resources/: constants given as dense_resource.

`stablehlo.constant dense_resource<NAME> : tensor<...>` keeps its elements in the
file's trailing `{-# dialect_resources: { builtin: { NAME: "0x04000000..." } } #-}`
section (MLIR's blob layout: a 4-byte little-endian alignment, then the raw
elements). jax.jit/jax.export in JAX 0.10 print large constants as dense<...>, so
each program here is built with JAX's own MLIR Python bindings
(ir.DenseResourceElementsAttr.get_from_buffer) and printed by MLIR's printer:
the text is exactly what MLIR tools (mlir-opt, stablehlo-opt, MLIR bytecode ->
text) print for such constants. Expected values: XLA:CPU running the same
computation with the constant inlined (jax.jit), which is exact for these ops.

Cases: f32_add (f32[3] blob added to the input), i32_matrix (i32[2x3] blob
multiplied with the input), f64_two_blobs (two f64 blobs, one used twice).
Error cases (missing blob, `dense_resource<__elided__>`, wrong size, bad hex)
are parse errors and live in tests/unit/test_parse.c.

usage: python3 tests/jax/gen_resources.py   (pip jax; writes tests/jax/resources/)
"""
import os
import shutil

import jax
import numpy as np
from jax._src.interpreters import mlir as jm
from jax._src.lib.mlir import ir

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "resources")
rng = np.random.default_rng(0)

MLIR_T = {np.float32: "f32", np.int32: "i32", np.float64: "f64"}


def tensor_t(a):
    return "tensor<" + "".join(f"{d}x" for d in a.shape) + MLIR_T[a.dtype.type] + ">"


def build(body, blobs):
    """Parses `body` (a module whose constants read `@NAME@`, in the order of
    `blobs` {NAME: array}), makes each constant's value a dense_resource blob
    NAME holding the array, and returns MLIR's printed text."""
    ctx = jm.make_ir_context()
    with ctx, ir.Location.unknown():
        text = body
        for name, a in blobs.items():
            text = text.replace(f"@{name}@", f"dense<{0 if a.dtype.kind == 'i' else 0.0}> : {tensor_t(a)}")
        module = ir.Module.parse(text)
        consts = []

        def walk(op):
            for region in op.regions:
                for block in region.blocks:
                    for o in block.operations:
                        if o.operation.name == "stablehlo.constant":
                            consts.append(o.operation)
                        walk(o.operation)
        walk(module.operation)
        assert len(consts) == len(blobs)
        for op, (name, a) in zip(consts, blobs.items()):
            t = ir.RankedTensorType(op.results[0].type)
            op.attributes["value"] = ir.DenseResourceElementsAttr.get_from_buffer(
                memoryview(np.ascontiguousarray(a)), name, t)
        return module.operation.get_asm()


def write_case(name, text, inputs, outputs):
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "inputs"))
    os.makedirs(os.path.join(d, "expected"))
    with open(os.path.join(d, "program.mlir"), "w") as fh:
        fh.write(text)
    for k, x in enumerate(inputs):
        np.save(os.path.join(d, "inputs", f"arg{k}.npy"), x)
    for k, y in enumerate(outputs):
        np.save(os.path.join(d, "expected", f"out{k}.npy"), np.asarray(y))


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    c = rng.standard_normal(3).astype(np.float32)
    x = rng.standard_normal(3).astype(np.float32)
    t = build("""module @f32_add {
  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %c = stablehlo.constant @c@
    %0 = stablehlo.add %arg0, %c : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}""", {"c": c})
    write_case("f32_add", t, [x], [jax.jit(lambda a: a + c)(x)])

    w = rng.integers(-100, 100, (2, 3)).astype(np.int32)
    y = rng.integers(-100, 100, (2, 3)).astype(np.int32)
    t = build("""module @i32_matrix {
  func.func public @main(%arg0: tensor<2x3xi32>) -> tensor<2x3xi32> {
    %c = stablehlo.constant @w@
    %0 = stablehlo.multiply %arg0, %c : tensor<2x3xi32>
    return %0 : tensor<2x3xi32>
  }
}""", {"w": w})
    write_case("i32_matrix", t, [y], [jax.jit(lambda a: a * w)(y)])

    with jax.enable_x64():
        a = rng.standard_normal((2, 2))
        b = rng.standard_normal((2, 2))
        z = rng.standard_normal((2, 2))
        t = build("""module @f64_two_blobs {
  func.func public @main(%arg0: tensor<2x2xf64>) -> (tensor<2x2xf64>, tensor<2x2xf64>) {
    %a = stablehlo.constant @a@
    %b = stablehlo.constant @b@
    %0 = stablehlo.multiply %arg0, %a : tensor<2x2xf64>
    %1 = stablehlo.add %0, %b : tensor<2x2xf64>
    %2 = stablehlo.subtract %1, %a : tensor<2x2xf64>
    return %1, %2 : tensor<2x2xf64>, tensor<2x2xf64>
  }
}""", {"a": a, "b": b})
        r1 = jax.jit(lambda v: v * a + b)(z)
        write_case("f64_two_blobs", t, [z], [r1, jax.jit(lambda v: v - a)(r1)])


if __name__ == "__main__":
    main()
