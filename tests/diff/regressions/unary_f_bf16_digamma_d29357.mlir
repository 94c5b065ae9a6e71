// chlo.digamma(+0) and (-0) give -inf in every float type; the CHLO decomposition (and XLA) give NaN at every non-positive integer (hlo already gives NaN at -1, -2)
module @jit_digamma attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<bf16>) -> (tensor<bf16> {jax.result_info = "result"}) {
    %0 = chlo.digamma %arg0 : tensor<bf16> -> tensor<bf16>
    return %0 : tensor<bf16>
  }
}
