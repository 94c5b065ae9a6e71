// PIPELINE: inline
// EXPECT-ERROR: error_recursive_call.mlir:8:8: error: inline: @f calls itself (directly or through other functions)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
