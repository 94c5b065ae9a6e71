sdy.mesh @"1mesh" = <["x"=1]>
func.func @mAin(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.abs %a {ding = #sdy.sharding_per_value<[<@"qmesh::@manual_axes", [{}]>]>} : tensor<2xf32>
}
