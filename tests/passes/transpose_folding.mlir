// PIPELINE: transpose-folding,dce
// A dot_general operand that is a transpose reads the transpose's operand,
// its dimension numbers mapped through the permutation, when the free dims
// keep their order; otherwise the transpose stays.

// q . k^T (attention scores): the rhs transpose folds into rhs dims.
func.func @main(%q: tensor<16x8xf32>, %k: tensor<32x8xf32>) -> tensor<16x32xf32> {
  %t = stablehlo.transpose %k, dims = [1, 0] : (tensor<32x8xf32>) -> tensor<8x32xf32>
  %0 = stablehlo.dot_general %q, %t, contracting_dims = [1] x [0] : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}
// CHECK: %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [1]
// CHECK-NOT: transpose

// -----
// A batched lhs transpose that swaps batch and contracting dims folds; one
// that reorders two free dims does not (the result order would change).
func.func @main(%a: tensor<4x2x3xf32>, %b: tensor<2x4x5xf32>, %c: tensor<3x6x4xf32>, %d: tensor<4x7xf32>) -> (tensor<2x3x5xf32>, tensor<6x3x7xf32>) {
  %t = stablehlo.transpose %a, dims = [1, 2, 0] : (tensor<4x2x3xf32>) -> tensor<2x3x4xf32>
  %0 = stablehlo.dot_general %t, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %u = stablehlo.transpose %c, dims = [1, 0, 2] : (tensor<3x6x4xf32>) -> tensor<6x3x4xf32>
  %1 = stablehlo.dot_general %u, %d, contracting_dims = [2] x [0] : (tensor<6x3x4xf32>, tensor<4x7xf32>) -> tensor<6x3x7xf32>
  return %0, %1 : tensor<2x3x5xf32>, tensor<6x3x7xf32>
}
// CHECK: %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [1] x [0], contracting_dims = [0] x [1]
// CHECK: %1 = stablehlo.transpose %arg2, dims = [1, 0, 2]
// CHECK-NEXT: %2 = stablehlo.dot_general %1, %arg3, contracting_dims = [2] x [0]
