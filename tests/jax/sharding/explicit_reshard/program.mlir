module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=1]> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}}
  func.func public @main(%arg0: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x2xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<4x2xf32>
    %2 = stablehlo.multiply %arg0, %1 : tensor<4x2xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{"x"}, {}]> : tensor<4x2xf32>
    %4 = sdy.sharding_constraint %3 <@mesh, [{}, {"x"}]> : tensor<4x2xf32>
    return %4 : tensor<4x2xf32>
  }
}
