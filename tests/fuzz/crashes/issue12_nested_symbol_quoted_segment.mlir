sdy.mesh @"1mesh" = <["x"=1]>
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.abs %a {sdy.sharding = #sdy.sharding_per_value<[<@"1mesh::@", [{}]>]>} : tensor<2xf32>
  %1 = stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[<@"odd mesh", [{}]>]>} : tensor<2xf32>
  return %1 : tensor<2xf32>
}
