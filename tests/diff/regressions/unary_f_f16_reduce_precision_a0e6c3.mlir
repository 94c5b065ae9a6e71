// out0 f16: NaN positions differ (2); at (0, 0, 0): hlo np.float16(inf), xla np.float16(nan) (unary_f:f16:reduce_precision)
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x1x1xf16>) -> (tensor<4x1x1xf16> {jax.result_info = "result"}) {
    %0 = stablehlo.reduce_precision %arg0, format = e5m0 : tensor<4x1x1xf16>
    return %0 : tensor<4x1x1xf16>
  }
}
