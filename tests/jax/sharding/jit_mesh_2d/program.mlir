module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=1, "y"=1]> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}, {name = "y", size = 1 : i64}]}}
  func.func public @main(%arg0: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<2x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> (tensor<4x3xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<4x2xf32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
    %2 = stablehlo.subtract %arg0, %1 : tensor<4x2xf32>
    return %0, %2 : tensor<4x3xf32>, tensor<4x2xf32>
  }
}
