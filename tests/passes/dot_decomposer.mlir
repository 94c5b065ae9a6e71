// PIPELINE: dot-decomposer
// A dot_general whose operands a strided GEMM reads in place (batch,
// contracting and free dims each one stride: dot_decomposer.c) is left
// alone; every other one becomes a [B,]MxK . [B,]KxN product that a GEMM
// reads in place: operands transposed to (batch, free, contracting) / (batch,
// contracting, free) or the transposed-matrix order (no copy when the dims
// lie so already; else the order that keeps the innermost dim innermost),
// reshaped to rank 3 (2 without batch dims), the product reshaped back.

// Attention scores with one sequence (q, k [1, S, H, D], batching dims
// (0, 2)): the heads are one batch stride (D) apart, a head's rows H*D
// apart, its contracting dim contiguous: a strided GEMM reads both in
// place, so the dot is left alone.
func.func @main(%q: tensor<1x16x4x8xf32>, %k: tensor<1x16x4x8xf32>) -> tensor<1x4x16x16xf32> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<1x16x4x8xf32>, tensor<1x16x4x8xf32>) -> tensor<1x4x16x16xf32>
  return %0 : tensor<1x4x16x16xf32>
}
// CHECK: %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3]
// CHECK-NEXT: return %0
// CHECK-NOT: transpose

// -----
// Probabilities times values (v [1, S, H, D] batching dims (0, 2),
// contracting over S, which is strided: v is read transposed with ld =
// H*D; p [1, H, S, S] has leading batch dims): left alone.
func.func @main(%v: tensor<1x16x4x8xf32>, %p: tensor<1x4x16x16xf32>) -> tensor<1x4x8x16xf32> {
  %0 = stablehlo.dot_general %v, %p, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<1x16x4x8xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}
// CHECK: %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3]
// CHECK-NEXT: return %0

// -----
// The same product read through a transpose that moves its innermost dim
// (JAX's attention output: [B, H, D, S] -> [B, S, H, D]): the operands
// are swapped, dot(p, v) -> [B, H, S, D] (each term b*a = a*b, summed in
// the same order: bit-exact), so the transpose copies contiguous rows.
func.func @main(%v: tensor<1x16x4x8xf32>, %p: tensor<1x4x16x16xf32>) -> tensor<1x16x4x8xf32> {
  %0 = stablehlo.dot_general %v, %p, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<1x16x4x8xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x8x16xf32>
  %1 = stablehlo.transpose %0, dims = [0, 3, 1, 2] : (tensor<1x4x8x16xf32>) -> tensor<1x16x4x8xf32>
  return %1 : tensor<1x16x4x8xf32>
}
// CHECK: %0 = stablehlo.dot_general %arg1, %arg0, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<1x4x16x16xf32>, tensor<1x16x4x8xf32>) -> tensor<1x4x16x8xf32>
// CHECK-NEXT: %1 = stablehlo.transpose %0, dims = [0, 2, 1, 3] : (tensor<1x4x16x8xf32>) -> tensor<1x16x4x8xf32>
// CHECK-NEXT: return %1

// -----
// A batched product transposed to (batch, rhs free, lhs free) is the
// swapped product itself: no transpose left.
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x5x3xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = stablehlo.transpose %0, dims = [0, 2, 1] : (tensor<2x3x5xf32>) -> tensor<2x5x3xf32>
  return %1 : tensor<2x5x3xf32>
}
// CHECK: %0 = stablehlo.dot_general %arg1, %arg0, batching_dims = [0] x [0], contracting_dims = [1] x [2] : (tensor<2x4x5xf32>, tensor<2x3x4xf32>) -> tensor<2x5x3xf32>
// CHECK-NEXT: return %0
// CHECK-NOT: transpose

// -----
// Not swapped: a transpose that keeps the innermost dim innermost, a
// second user, different precisions, a matrix product without batch dims
// (see dot_decomposer.c).
func.func @main(%v: tensor<1x16x4x8xf32>, %p: tensor<1x4x16x16xf32>, %x: tensor<6x8xf32>, %w: tensor<8x6xf32>) -> (tensor<1x8x4x16xf32>, tensor<1x16x4x8xf32>, tensor<1x4x8x16xf32>, tensor<1x16x4x8xf32>, tensor<6x6xf32>) {
  %0 = stablehlo.dot_general %v, %p, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3] : (tensor<1x16x4x8xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x8x16xf32>
  %1 = stablehlo.transpose %0, dims = [0, 2, 1, 3] : (tensor<1x4x8x16xf32>) -> tensor<1x8x4x16xf32>
  %2 = stablehlo.dot_general %v, %p, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3] : (tensor<1x16x4x8xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x8x16xf32>
  %3 = stablehlo.transpose %2, dims = [0, 3, 1, 2] : (tensor<1x4x8x16xf32>) -> tensor<1x16x4x8xf32>
  %4 = stablehlo.dot_general %v, %p, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [HIGHEST, DEFAULT] : (tensor<1x16x4x8xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x8x16xf32>
  %5 = stablehlo.transpose %4, dims = [0, 3, 1, 2] : (tensor<1x4x8x16xf32>) -> tensor<1x16x4x8xf32>
  %6 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<6x8xf32>, tensor<8x6xf32>) -> tensor<6x6xf32>
  %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<6x6xf32>) -> tensor<6x6xf32>
  return %1, %3, %2, %5, %7 : tensor<1x8x4x16xf32>, tensor<1x16x4x8xf32>, tensor<1x4x8x16xf32>, tensor<1x16x4x8xf32>, tensor<6x6xf32>
}
// CHECK: %0 = stablehlo.dot_general %arg0, %arg1
// CHECK-NEXT: %1 = stablehlo.transpose %0, dims = [0, 2, 1, 3]
// CHECK-NEXT: %2 = stablehlo.dot_general %arg0, %arg1
// CHECK-NEXT: %3 = stablehlo.transpose %2, dims = [0, 3, 1, 2]
// CHECK-NEXT: %4 = stablehlo.dot_general %arg0, %arg1
// CHECK-NEXT: %5 = stablehlo.transpose %4, dims = [0, 3, 1, 2]
// CHECK-NEXT: %6 = stablehlo.dot_general %arg2, %arg3
// CHECK-NEXT: %7 = stablehlo.transpose %6, dims = [1, 0]

// -----
// Two sequences (q, k [2, S, H, D], batching dims (0, 2)): the batch
// index (b, h) is at b*S*H*D + h*D, not one stride: both operands are
// transposed to (batch, free, contracting) as before.
func.func @main(%q: tensor<2x16x4x8xf32>, %k: tensor<2x16x4x8xf32>) -> tensor<2x4x16x16xf32> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>) -> tensor<2x4x16x16xf32>
  return %0 : tensor<2x4x16x16xf32>
}
// CHECK: %0 = stablehlo.transpose %arg0, dims = [0, 2, 1, 3] : (tensor<2x16x4x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK-NEXT: %1 = stablehlo.reshape %0 : (tensor<2x4x16x8xf32>) -> tensor<8x16x8xf32>
// CHECK-NEXT: %2 = stablehlo.transpose %arg1, dims = [0, 2, 1, 3] : (tensor<2x16x4x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK-NEXT: %3 = stablehlo.reshape %2 : (tensor<2x4x16x8xf32>) -> tensor<8x16x8xf32>
// CHECK-NEXT: %4 = stablehlo.dot_general %1, %3, batching_dims = [0] x [0], contracting_dims = [2] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x16x8xf32>, tensor<8x16x8xf32>) -> tensor<8x16x16xf32>
// CHECK-NEXT: %5 = stablehlo.reshape %4 : (tensor<8x16x16xf32>) -> tensor<2x4x16x16xf32>
// CHECK-NEXT: return %5

// -----
// The same one-sequence attention on integers (no GEMM takes them) and a
// matrix whose rows and columns are both strided (contracting over the
// middle dim of [4, 3, 5] with free dims (0, 2): the free dims are not a
// chain): the canonical form, as before.
func.func @main(%q: tensor<1x16x4x8xi32>, %k: tensor<1x16x4x8xi32>, %x: tensor<4x3x5xf32>, %y: tensor<3x2xf32>) -> (tensor<1x4x16x16xi32>, tensor<4x5x2xf32>) {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<1x16x4x8xi32>, tensor<1x16x4x8xi32>) -> tensor<1x4x16x16xi32>
  %1 = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0] : (tensor<4x3x5xf32>, tensor<3x2xf32>) -> tensor<4x5x2xf32>
  return %0, %1 : tensor<1x4x16x16xi32>, tensor<4x5x2xf32>
}
// CHECK: stablehlo.transpose %arg0, dims = [0, 2, 1, 3] : (tensor<1x16x4x8xi32>) -> tensor<1x4x16x8xi32>
// CHECK: stablehlo.dot_general %1, %3, batching_dims = [0] x [0], contracting_dims = [2] x [2]
// CHECK: stablehlo.transpose %arg2, dims = [1, 0, 2] : (tensor<4x3x5xf32>) -> tensor<3x4x5xf32>
// CHECK-NEXT: stablehlo.reshape %{{[0-9]+}} : (tensor<3x4x5xf32>) -> tensor<3x20xf32>
// CHECK-NEXT: stablehlo.dot_general %{{[0-9]+}}, %arg3, contracting_dims = [0] x [0]

// -----
// A weight gradient: two contracting dims (0, 1), a chain on both sides,
// the free dim contiguous: read transposed in place, left alone.
func.func @main(%x: tensor<8x6x5xf32>, %g: tensor<8x6x7xf32>) -> tensor<5x7xf32> {
  %0 = stablehlo.dot_general %x, %g, contracting_dims = [0, 1] x [0, 1] : (tensor<8x6x5xf32>, tensor<8x6x7xf32>) -> tensor<5x7xf32>
  return %0 : tensor<5x7xf32>
}
// CHECK: %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [0, 1] x [0, 1]
// CHECK-NEXT: return %0
// CHECK-NOT: reshape

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
