// chlo.acos(-1) gave 0 instead of pi in every float type (fixed: select pi at x == -1)
module @jit_acos attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<bf16>) -> (tensor<bf16> {jax.result_info = "result"}) {
    %0 = chlo.acos %arg0 : tensor<bf16> -> tensor<bf16>
    return %0 : tensor<bf16>
  }
}
