module @sdy_syntax attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=1, "y"=1]>
  sdy.mesh @mesh_ids = <["a"=1], device_ids=[0]>
  sdy.mesh @maximal = <[], device_ids=[0]>
  func.func public @main(%arg0: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}p0, {?}p1]>}) -> (tensor<4x2xf32> {jax.result_info = "result", sdy,sharding = #sdy.sharding<@mesh, [{}, {}], replicated={"x", "y"}>}) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x":(1)1}, {}], unreduced={"y"}> : tensor<4x2xf32>
    %1 = sdy.reshard %0 <mesh<["z"=1]>, [{"z"}, {}]> : tensor<4x2xf32>
    %2 = sdy.propagation_barrier %1 allowed_direction=BACKWARD : tensor<4x2xf32>
    %3 = sdy.named_computation<"double">(%2) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh_ids, [{"a"}, {}]>] (%arg1: tensor<4x2xf32>) {
      %7 = stablehlo.add %arg1, %arg1 : tensor<4x2xf32>
      sdy.return %7 : tensor<4x2xf32>
    } : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %4 = sdy.named_computation<"plain">(%3) (%arg1: tensor<4x2xf32>) {
      sdy.return %arg1 : tensor<4x2xf32>
    } : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %cst = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@maximal, []>]>} dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, 12\\[{x22}, {}]>]>"}, mhlo.sharding = "{replicated}"} : (tensor<f32>) -> tensor<4x2xf32>
    sdy.sharding_group %5 group_id=7 : tensor<4x2xf32>
    %6 = stablehlo.add %4, %5 {sdy.sharding = #sdy.sharding_per_value<[<@1mesh, [{"y"}, {"x"}]>]>} : tensor<4x2xf32>
    return %6 : tensor<4x2xf32>
  }
}
