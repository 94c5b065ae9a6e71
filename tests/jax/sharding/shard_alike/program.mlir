module @jit_sa attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x2xf32>) -> (tensor<4x2xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<4x2xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
    %3 = stablehlo.multiply %arg0, %2 : tensor<4x2xf32>
    sdy.sharding_group %1 group_id=0 : tensor<4x2xf32>
    sdy.sharding_group %3 group_id=0 : tensor<4x2xf32>
    %4 = stablehlo.add %1, %3 : tensor<4x2xf32>
    return %4 : tensor<4x2xf32>
  }
}
