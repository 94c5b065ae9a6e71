// out0 bf16: 1/1 differ (ulp/2/2); at (): hlo 0, xla 3.14062 (unary_f:bf16:acos)
module @jit_acos attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<bf16>) -> (tensor<bf16> {jax.result_info = "result"}) {
    %0 = chlo.acos %arg0 : tensor<bf16> -> tensor<bf16>
    return %0 : tensor<bf16>
  }
}
