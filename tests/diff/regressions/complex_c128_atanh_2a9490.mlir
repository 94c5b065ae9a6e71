// chlo.atanh on complex at the poles: atanh(1+0j) gives inf+NaN*i and atanh(-1+0j) -inf+NaN*i; expected +-inf+0i (XLA, C99 catanh)
module @jit_atanh attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xcomplex<f64>>) -> (tensor<3xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = chlo.atanh %arg0 : tensor<3xcomplex<f64>> -> tensor<3xcomplex<f64>>
    return %0 : tensor<3xcomplex<f64>>
  }
}
