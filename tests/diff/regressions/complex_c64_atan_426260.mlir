// chlo.atan on complex takes the wrong side of the branch cut: atan(+0-100j) gives -1.5707964-0.010000333j, expected +1.5707964-0.010000333j (XLA, C99 catan); also atan(0-1j) gives NaN-inf*i, expected 0-inf*i
module @jit_atan attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<complex<f32>>) -> (tensor<complex<f32>> {jax.result_info = "result"}) {
    %0 = chlo.atan %arg0 : tensor<complex<f32>> -> tensor<complex<f32>>
    return %0 : tensor<complex<f32>>
  }
}
