// out0 c64: 1/1 differ (rel 2 > 1e-05); at (): hlo np.complex64(-1.5707964-0.010000333j), xla np.complex64(1.5707964-0.010000333j) (complex:c64:atan)
module @jit_atan attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<complex<f32>>) -> (tensor<complex<f32>> {jax.result_info = "result"}) {
    %0 = chlo.atan %arg0 : tensor<complex<f32>> -> tensor<complex<f32>>
    return %0 : tensor<complex<f32>>
  }
}
