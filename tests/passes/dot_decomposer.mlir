// PIPELINE: dot-decomposer
// Every dot_general becomes a [B,]MxK . [B,]KxN product that a GEMM reads in
// place: operands transposed to (batch, free, contracting) / (batch,
// contracting, free) or the transposed-matrix order (no copy when the dims
// lie so already; else the order that keeps the innermost dim innermost),
// reshaped to rank 3 (2 without batch dims), the product reshaped back.

// Attention scores: batch dims (0, 2) not leading on either side.
func.func @main(%q: tensor<1x16x4x8xf32>, %k: tensor<1x16x4x8xf32>) -> tensor<1x4x16x16xf32> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<1x16x4x8xf32>, tensor<1x16x4x8xf32>) -> tensor<1x4x16x16xf32>
  return %0 : tensor<1x4x16x16xf32>
}
// CHECK: %0 = stablehlo.transpose %arg0, dims = [0, 2, 1, 3] : (tensor<1x16x4x8xf32>) -> tensor<1x4x16x8xf32>
// CHECK-NEXT: %1 = stablehlo.reshape %0 : (tensor<1x4x16x8xf32>) -> tensor<4x16x8xf32>
// CHECK-NEXT: %2 = stablehlo.transpose %arg1, dims = [0, 2, 1, 3] : (tensor<1x16x4x8xf32>) -> tensor<1x4x16x8xf32>
// CHECK-NEXT: %3 = stablehlo.reshape %2 : (tensor<1x4x16x8xf32>) -> tensor<4x16x8xf32>
// CHECK-NEXT: %4 = stablehlo.dot_general %1, %3, batching_dims = [0] x [0], contracting_dims = [2] x [2], precision = [DEFAULT, DEFAULT] : (tensor<4x16x8xf32>, tensor<4x16x8xf32>) -> tensor<4x16x16xf32>
// CHECK-NEXT: %5 = stablehlo.reshape %4 : (tensor<4x16x16xf32>) -> tensor<1x4x16x16xf32>
// CHECK-NEXT: return %5

// -----
// A weight gradient: two contracting dims, already in the transposed-matrix
// order on both sides: reshapes only, no transpose.
func.func @main(%x: tensor<8x6x5xf32>, %g: tensor<8x6x7xf32>) -> tensor<5x7xf32> {
  %0 = stablehlo.dot_general %x, %g, contracting_dims = [0, 1] x [0, 1] : (tensor<8x6x5xf32>, tensor<8x6x7xf32>) -> tensor<5x7xf32>
  return %0 : tensor<5x7xf32>
}
// CHECK: %0 = stablehlo.reshape %arg0 : (tensor<8x6x5xf32>) -> tensor<48x5xf32>
// CHECK-NEXT: %1 = stablehlo.reshape %arg1 : (tensor<8x6x7xf32>) -> tensor<48x7xf32>
// CHECK-NEXT: %2 = stablehlo.dot_general %0, %1, contracting_dims = [0] x [0] : (tensor<48x5xf32>, tensor<48x7xf32>) -> tensor<5x7xf32>
// CHECK-NEXT: return %2
// CHECK-NOT: transpose

// -----
// Contracting dims listed out of order keep their listed order (the sum
// order of the original), which makes a transpose of the lhs (to [K, M]:
// its innermost dim stays innermost).
func.func @main(%x: tensor<3x4x5xf32>, %y: tensor<4x3x2xf32>) -> tensor<5x2xf32> {
  %0 = stablehlo.dot_general %x, %y, contracting_dims = [1, 0] x [0, 1] : (tensor<3x4x5xf32>, tensor<4x3x2xf32>) -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}
// CHECK: stablehlo.transpose %arg0, dims = [1, 0, 2] : (tensor<3x4x5xf32>) -> tensor<4x3x5xf32>
// CHECK-NEXT: stablehlo.reshape %0 : (tensor<4x3x5xf32>) -> tensor<12x5xf32>
// CHECK-NEXT: stablehlo.reshape %arg1 : (tensor<4x3x2xf32>) -> tensor<12x2xf32>
// CHECK-NEXT: stablehlo.dot_general %1, %2, contracting_dims = [0] x [0]

// -----
// Canonical dots, outer products (no contracting dim), integer dots with
// a plain form, and `stablehlo.dot` are left alone.
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %u: tensor<3xf32>, %v: tensor<4xf32>, %m: tensor<3x4xi32>, %n: tensor<5x4xi32>) -> (tensor<2x3x5xf32>, tensor<3x4xf32>, tensor<3x5xi32>) {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = stablehlo.dot_general %u, %v, contracting_dims = [] x [] : (tensor<3xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %2 = stablehlo.dot_general %m, %n, contracting_dims = [1] x [1] : (tensor<3x4xi32>, tensor<5x4xi32>) -> tensor<3x5xi32>
  return %0, %1, %2 : tensor<2x3x5xf32>, tensor<3x4xf32>, tensor<3x5xi32>
}
// CHECK: %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1]
// CHECK-NEXT: %1 = stablehlo.dot_general %arg2, %arg3, contracting_dims = [] x []
// CHECK-NEXT: %2 = stablehlo.dot_general %arg4, %arg5, contracting_dims = [1] x [1]
// CHECK-NOT: reshape
