// bench/THREADS.md: a big elementwise kernel (one loop fusion after --passes cpu):
// out = tanh(a) * b + c over 4M f32 elements.
func.func @main(%a: tensor<4096x1024xf32>, %b: tensor<4096x1024xf32>, %c: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  %t = stablehlo.tanh %a : tensor<4096x1024xf32>
  %m = stablehlo.multiply %t, %b : tensor<4096x1024xf32>
  %r = stablehlo.add %m, %c : tensor<4096x1024xf32>
  return %r : tensor<4096x1024xf32>
}
