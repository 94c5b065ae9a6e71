// bench/THREADS.md: a row reduction (one input fusion after --passes cpu):
// out[i] = sum_j a[i,j] * a[i,j] over 4096 rows of 1024 f32.
func.func @main(%a: tensor<4096x1024xf32>) -> tensor<4096xf32> {
  %sq = stablehlo.multiply %a, %a : tensor<4096x1024xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%sq init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4096x1024xf32>, tensor<f32>) -> tensor<4096xf32>
  return %s : tensor<4096xf32>
}
