// chlo.atanh on complex with an infinite real part gives NaN+NaN*i: atanh(inf-1j) must be 0-1.5707964j (XLA, C99 catanh)
module @jit_atanh attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<complex<f32>>) -> (tensor<complex<f32>> {jax.result_info = "result"}) {
    %0 = chlo.atanh %arg0 : tensor<complex<f32>> -> tensor<complex<f32>>
    return %0 : tensor<complex<f32>>
  }
}
