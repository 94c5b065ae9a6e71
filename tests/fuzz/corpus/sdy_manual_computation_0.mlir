module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=1]> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}}
  func.func public @main(%arg0: tensor<4x2xf32>) -> (tensor<4x2xf32> {jax.result_info = "result"}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg1: tensor<4x2xf32>) {
      %cst = stablehlo.constant dense<3.000000e+00> : tensor<f32>
      %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
      %2 = stablehlo.multiply %arg1, %1 : tensor<4x2xf32>
      %3 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<0> : tensor<1x1xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %5 = stablehlo.add %arg2, %arg3 : tensor<f32>
        stablehlo.return %5 : tensor<f32>
      }) : (tensor<4x2xf32>) -> tensor<4x2xf32>
      %4 = stablehlo.add %2, %3 : tensor<4x2xf32>
      sdy.return %4 : tensor<4x2xf32>
    } : (tensor<4x2xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}
