// out0 c128: NaN positions differ (1); at (): hlo np.complex128(nan+infj), xla np.complex128(-1.5707963267948966-0j) (complex:c128:atan)
module @jit_atan attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<complex<f64>>) -> (tensor<complex<f64>> {jax.result_info = "result"}) {
    %0 = chlo.atan %arg0 : tensor<complex<f64>> -> tensor<complex<f64>>
    return %0 : tensor<complex<f64>>
  }
}
