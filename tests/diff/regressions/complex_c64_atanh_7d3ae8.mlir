// out0 c64: NaN positions differ (1); at (): hlo np.complex64(nan+nanj), xla np.complex64(-1.5707964j) (complex:c64:atanh)
module @jit_atanh attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<complex<f32>>) -> (tensor<complex<f32>> {jax.result_info = "result"}) {
    %0 = chlo.atanh %arg0 : tensor<complex<f32>> -> tensor<complex<f32>>
    return %0 : tensor<complex<f32>>
  }
}
