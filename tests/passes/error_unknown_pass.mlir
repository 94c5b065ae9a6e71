// PIPELINE: inline,simplfy
// EXPECT-ERROR: unknown pass 'simplfy'; the passes are: inline, chlo-legalize
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
