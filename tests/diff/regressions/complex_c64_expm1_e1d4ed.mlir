// expm1 on complex with exp(re) overflowing and im = 0 (e.g. 1e4+0j, inf+0j) gives inf+NaN*i; XLA (and C99 cexp's rule for im = 0) give inf+0i; stablehlo.exponential gets it right
module @jit_expm1 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x2xcomplex<f32>>) -> (tensor<3x2xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = stablehlo.exponential_minus_one %arg0 : tensor<3x2xcomplex<f32>>
    return %0 : tensor<3x2xcomplex<f32>>
  }
}
