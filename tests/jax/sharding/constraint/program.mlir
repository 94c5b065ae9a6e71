module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=1]> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}}
  func.func public @main(%arg0: tensor<4x2xf32>) -> (tensor<4x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.sine %arg0 : tensor<4x2xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<4x2xf32>
    %cst = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
    %3 = stablehlo.multiply %1, %2 : tensor<4x2xf32>
    return %3 : tensor<4x2xf32>
  }
}
