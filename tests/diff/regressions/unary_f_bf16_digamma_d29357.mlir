// out0 bf16: NaN positions differ (1); at (): hlo -inf, xla nan (unary_f:bf16:digamma)
module @jit_digamma attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<bf16>) -> (tensor<bf16> {jax.result_info = "result"}) {
    %0 = chlo.digamma %arg0 : tensor<bf16> -> tensor<bf16>
    return %0 : tensor<bf16>
  }
}
