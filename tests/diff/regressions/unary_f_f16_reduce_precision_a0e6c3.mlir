// reduce_precision e5m0 (mantissa_bits = 0) turns NaN (f16 0x7E00) into +inf; XLA keeps NaN (the spec's bit-level wording is ambiguous for NaN, but a NaN should stay a NaN)
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x1x1xf16>) -> (tensor<4x1x1xf16> {jax.result_info = "result"}) {
    %0 = stablehlo.reduce_precision %arg0, format = e5m0 : tensor<4x1x1xf16>
    return %0 : tensor<4x1x1xf16>
  }
}
