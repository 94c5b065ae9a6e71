// chlo.atan on complex overflows for huge |z|: atan(-2.5-1.7e308j) gives NaN+inf*i, expected -1.5707963267948966-0j (XLA)
module @jit_atan attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<complex<f64>>) -> (tensor<complex<f64>> {jax.result_info = "result"}) {
    %0 = chlo.atan %arg0 : tensor<complex<f64>> -> tensor<complex<f64>>
    return %0 : tensor<complex<f64>>
  }
}
