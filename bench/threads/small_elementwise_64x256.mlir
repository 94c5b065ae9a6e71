// bench/THREADS.md: a small elementwise kernel (16K elements): runs inline.
func.func @main(%a: tensor<64x256xf32>, %b: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %t = stablehlo.tanh %a : tensor<64x256xf32>
  %r = stablehlo.add %t, %b : tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}
