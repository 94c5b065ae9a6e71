#!/usr/bin/env python3
"""gen_sharding.py — tests/jax/sharding/: programs carrying sharding annotations.

JAX 0.10 prints sharding with Shardy (`sdy` dialect): module-level
`sdy.mesh @name = <["x"=1]>`, `#sdy.sharding<@mesh, [{"x"}, {}]>` argument and
result attributes, `sdy.sharding_constraint`, `sdy.sharding_group`,
`sdy.manual_computation`, `#sdy.sharding_per_value` on ops, and
`#sdy.op_sharding_rule` on custom calls; the older GSPMD path prints
`mhlo.sharding = "{devices=[...]...}"` strings. On one device every sharding is
an identity, so hlo's results must equal XLA:CPU's.

Cases (each: the JAX function it comes from; expected values from XLA:CPU by
calling the jitted function unless said otherwise):
  jit_in_out         jax.jit(f, in_shardings=NamedSharding(mesh, P("x")),
                     out_shardings=NamedSharding(mesh, P(None, "x"))), mesh x=1
  jit_mesh_2d        the same over a named 2-D mesh ("x"=1, "y"=1), two arguments
  constraint         jax.lax.with_sharding_constraint (Auto axes)
  explicit_reshard   explicit-axes mode (jax.sharding.set_mesh, AxisType.Explicit):
                     jax.sharding.reshard -> chains of sdy.sharding_constraint
  shard_alike        jax.experimental.shard_alike -> sdy.sharding_group
  shard_map_1dev     jax.shard_map on a one-device 2-D mesh (JAX inlines the body:
                     no manual_computation is printed for size-1 manual axes)
  manual_2dev        jax.shard_map over a 2-device mesh (lowered with 2 host
                     devices): sdy.manual_computation; hlo must refuse it with a
                     located "multi-device runs come later" error
  manual_1dev        manual_2dev's text rewritten by hand to a 1-device mesh
                     ("x"=1, local shape = global shape, all_reduce over [[0]]),
                     which JAX never prints (it inlines size-1 shard_maps) but
                     Shardy accepts; hlo runs the body once. Expected: XLA:CPU
                     running the same body (3*b + psum(b) = 4*b on one device)
  debug_print        jax.debug.print inside jit: `sdy.mesh @maximal_mesh_0 =
                     <[], device_ids=[0]>` and a host-callback custom call whose
                     results are unused (hlo skips it with a warning)
  sharding_rule      jax.experimental.custom_partitioning with sharding_rule, on a
                     2-device mesh: a custom call with #sdy.op_sharding_rule whose
                     target (a Python callback) cannot run outside JAX: error
  gspmd              jax_use_shardy_partitioner=False: mhlo.sharding strings and
                     the @Sharding custom call
  sdy_syntax         hand-written (Shardy's syntax, openxla/shardy docs): every
                     sharding form (open dims `?`, priorities, replicated=,
                     unreduced=, sub-axes "x":(1)2, inline meshes), reshard,
                     propagation_barrier, named_computation; all identities, so
                     the expected value is the spec's (NumPy: 2*x + 1)

usage: python3 tests/jax/gen_sharding.py   (pip jax; writes tests/jax/sharding/)
"""
import os
import shutil

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sharding")
rng = np.random.default_rng(0)
AUTO = AxisType.Auto


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def write_case(name, text, inputs, outputs=None, expect_error=None, expect_output=None):
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "inputs"))
    with open(os.path.join(d, "program.mlir"), "w") as fh:
        fh.write(text)
    for k, x in enumerate(inputs):
        np.save(os.path.join(d, "inputs", f"arg{k}.npy"), x)
    if expect_error is not None:
        with open(os.path.join(d, "expect_error"), "w") as fh:
            fh.write(expect_error + "\n")
        return
    if expect_output is not None:
        with open(os.path.join(d, "expect_output"), "w") as fh:
            fh.write(expect_output + "\n")
    os.makedirs(os.path.join(d, "expected"))
    outs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
    for k, y in enumerate(outs):
        np.save(os.path.join(d, "expected", f"out{k}.npy"), np.asarray(y))


def jit_case(name, fn, inputs, **kw):
    text = fn.lower(*inputs).as_text()
    write_case(name, text, inputs, fn(*inputs), **kw)
    return text


SDY_SYNTAX = """\
module @sdy_syntax attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=1, "y"=1]>
  sdy.mesh @mesh_ids = <["a"=1], device_ids=[0]>
  sdy.mesh @maximal = <[], device_ids=[0]>
  sdy.mesh @mesh4 = <["w"=4, "v"=1]>
  func.func public @main(%arg0: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}p0, {?}p1]>}) -> (tensor<4x2xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {}], replicated={"x", "y"}>}) {
    %0 = sdy.sharding_constraint %arg0 <@mesh4, [{"w":(1)2}, {}], unreduced={"v"}> : tensor<4x2xf32>
    %1 = sdy.reshard %0 <mesh<["z"=1]>, [{"z"}, {}]> : tensor<4x2xf32>
    %2 = sdy.propagation_barrier %1 allowed_direction=BACKWARD : tensor<4x2xf32>
    %3 = sdy.named_computation<"double">(%2) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh_ids, [{"a"}, {}]>] (%arg1: tensor<4x2xf32>) {
      %7 = stablehlo.add %arg1, %arg1 : tensor<4x2xf32>
      sdy.return %7 : tensor<4x2xf32>
    } : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %4 = sdy.named_computation<"plain">(%3) (%arg1: tensor<4x2xf32>) {
      sdy.return %arg1 : tensor<4x2xf32>
    } : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %cst = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@maximal, []>]>} dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\\22x\\22}, {}]>]>"}, mhlo.sharding = "{replicated}"} : (tensor<f32>) -> tensor<4x2xf32>
    sdy.sharding_group %5 group_id=7 : tensor<4x2xf32>
    %6 = stablehlo.add %4, %5 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"x"}]>]>} : tensor<4x2xf32>
    return %6 : tensor<4x2xf32>
  }
}
"""


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    dev1 = np.array(jax.devices()[:1])
    mesh1 = Mesh(dev1.reshape(1), ("x",), axis_types=(AUTO,))
    mesh2d = Mesh(dev1.reshape(1, 1), ("x", "y"), axis_types=(AUTO, AUTO))
    x = f32(4, 2)

    jit_case("jit_in_out", jax.jit(lambda a: a * 2 + 1,
                                   in_shardings=NamedSharding(mesh1, P("x")),
                                   out_shardings=NamedSharding(mesh1, P(None, "x"))), [x])
    jit_case("jit_mesh_2d", jax.jit(lambda a, b: (a @ b, a - 1),
                                    in_shardings=(NamedSharding(mesh2d, P("x", "y")),
                                                  NamedSharding(mesh2d, P(None, "y"))),
                                    out_shardings=(NamedSharding(mesh2d, P("x")),
                                                   NamedSharding(mesh2d, P(("x", "y"))))),
             [x, f32(2, 3)], )
    jit_case("constraint", jax.jit(lambda a: jax.lax.with_sharding_constraint(
        jnp.sin(a), NamedSharding(mesh1, P("x", None))) * 3), [x])

    mesh_ex = Mesh(dev1.reshape(1), ("x",), axis_types=(AxisType.Explicit,))
    with jax.sharding.set_mesh(mesh_ex):
        xs = jax.device_put(x, NamedSharding(mesh_ex, P("x")))
        fn = jax.jit(lambda a: jax.sharding.reshard(a * 2, P(None, "x")))
        write_case("explicit_reshard", fn.lower(xs).as_text(), [x], np.asarray(fn(xs)))

    from jax.experimental.shard_alike import shard_alike

    def sa(a):
        y, z = shard_alike(a + 1, a * 2)
        return y + z
    jit_case("shard_alike", jax.jit(sa), [x])

    jit_case("shard_map_1dev", jax.jit(jax.shard_map(
        lambda b: b * 3 + 1, mesh=mesh2d, in_specs=P("x", "y"), out_specs=P("x", "y"))), [x])

    mesh2 = Mesh(np.array(jax.devices()[:2]), ("x",), axis_types=(AUTO,))
    body = jax.shard_map(lambda b: b * 3 + jax.lax.psum(b, "x"), mesh=mesh2,
                         in_specs=P("x"), out_specs=P("x"))
    t2 = jax.jit(body).lower(x).as_text()
    write_case("manual_2dev", t2, [x], expect_error="multi-device (SPMD) runs come later")
    t1 = (t2.replace('mhlo.num_partitions = 2', 'mhlo.num_partitions = 1')
            .replace('"x"=2', '"x"=1').replace('size = 2 : i64', 'size = 1 : i64')
            .replace('tensor<2x2xf32>', 'tensor<4x2xf32>')
            .replace('dense<[[0, 1]]> : tensor<1x2xi64>', 'dense<0> : tensor<1x1xi64>'))
    assert t1 != t2 and '"x"=1' in t1
    write_case("manual_1dev", t1, [x], np.asarray(jax.jit(lambda b: b * 3 + b)(x)))

    def dbg(a):
        jax.debug.print("a = {a}", a=a)
        return a + 1
    jit_case("debug_print", jax.jit(dbg), [x], expect_output="xla_ffi_python_cpu_callback")

    from jax.experimental.custom_partitioning import custom_partitioning

    @custom_partitioning
    def cp(a):
        return a + 1
    cp.def_partition(infer_sharding_from_operands=lambda *a: None,
                     partition=lambda *a: None, sharding_rule="i j -> i j")
    t = jax.jit(lambda a: cp(a), in_shardings=NamedSharding(mesh2, P("x"))).lower(x).as_text()
    write_case("sharding_rule", t, [x], expect_error="CustomSPMDPartitioning")

    jax.config.update("jax_use_shardy_partitioner", False)
    try:
        jit_case("gspmd", jax.jit(lambda a: jax.lax.with_sharding_constraint(
            a + 1, NamedSharding(mesh1, P("x", None))),
            in_shardings=NamedSharding(mesh1, P("x")),
            out_shardings=NamedSharding(mesh1, P(None, "x"))), [x])
    finally:
        jax.config.update("jax_use_shardy_partitioner", True)

    write_case("sdy_syntax", SDY_SYNTAX, [x], 2 * x + 1)


if __name__ == "__main__":
    main()
