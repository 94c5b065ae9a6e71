// out0 c64: NaN positions differ (1); at (2, 1): hlo np.complex64(inf+nanj), xla np.complex64(inf+0j) (complex:c64:expm1)
module @jit_expm1 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x2xcomplex<f32>>) -> (tensor<3x2xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = stablehlo.exponential_minus_one %arg0 : tensor<3x2xcomplex<f32>>
    return %0 : tensor<3x2xcomplex<f32>>
  }
}
