// PIPELINE: reshape-hoisting
// GroupNorm's normalisation over [N, H, W, G, C/G] reshaped to [N, H, W, C]:
// the chain is computed over [N, H, W, C], the reshape of a reshape reads
// the original value, and each per-group broadcast becomes a broadcast of
// a tiny [N, 1, 1, C] value (the group's value repeated over its
// channels); the old chain goes.

func.func @main(%x: tensor<2x3x3x8xf32>, %m: tensor<2x1x1x4x1xf32>, %s: tensor<2x1x1x4x1xf32>) -> tensor<2x3x3x8xf32> {
  %r = stablehlo.reshape %x : (tensor<2x3x3x8xf32>) -> tensor<2x3x3x4x2xf32>
  %bm = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2, 3, 4] : (tensor<2x1x1x4x1xf32>) -> tensor<2x3x3x4x2xf32>
  %d = stablehlo.subtract %r, %bm : tensor<2x3x3x4x2xf32>
  %bs = stablehlo.broadcast_in_dim %s, dims = [0, 1, 2, 3, 4] : (tensor<2x1x1x4x1xf32>) -> tensor<2x3x3x4x2xf32>
  %q = stablehlo.divide %d, %bs : tensor<2x3x3x4x2xf32>
  %y = stablehlo.reshape %q : (tensor<2x3x3x4x2xf32>) -> tensor<2x3x3x8xf32>
  return %y : tensor<2x3x3x8xf32>
}
// CHECK: %0 = stablehlo.broadcast_in_dim %arg1, dims = [0, 1, 2, 3, 4] : (tensor<2x1x1x4x1xf32>) -> tensor<2x1x1x4x2xf32>
// CHECK-NEXT: %1 = stablehlo.reshape %0 : (tensor<2x1x1x4x2xf32>) -> tensor<2x1x1x8xf32>
// CHECK-NEXT: %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<2x1x1x8xf32>) -> tensor<2x3x3x8xf32>
// CHECK-NEXT: %3 = stablehlo.subtract %arg0, %2 : tensor<2x3x3x8xf32>
// CHECK-NEXT: %4 = stablehlo.broadcast_in_dim %arg2, dims = [0, 1, 2, 3, 4] : (tensor<2x1x1x4x1xf32>) -> tensor<2x1x1x4x2xf32>
// CHECK-NEXT: %5 = stablehlo.reshape %4 : (tensor<2x1x1x4x2xf32>) -> tensor<2x1x1x8xf32>
// CHECK-NEXT: %6 = stablehlo.broadcast_in_dim %5, dims = [0, 1, 2, 3] : (tensor<2x1x1x8xf32>) -> tensor<2x3x3x8xf32>
// CHECK-NEXT: %7 = stablehlo.divide %3, %6 : tensor<2x3x3x8xf32>
// CHECK-NEXT: return %7

// -----
// Left alone: a broadcast along whole merged runs (a row value: its merged
// index is affine already), a chain value read twice, and a split.
func.func @main(%x: tensor<2x3x8xf32>, %v: tensor<2x3xf32>, %z: tensor<6x8xf32>) -> (tensor<6x8xf32>, tensor<6x8xf32>, tensor<2x3x8xf32>) {
  %b = stablehlo.broadcast_in_dim %v, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3x8xf32>
  %a = stablehlo.multiply %x, %b : tensor<2x3x8xf32>
  %y = stablehlo.reshape %a : (tensor<2x3x8xf32>) -> tensor<6x8xf32>
  %e = stablehlo.exponential %x : tensor<2x3x8xf32>
  %f = stablehlo.add %e, %e : tensor<2x3x8xf32>
  %g = stablehlo.reshape %f : (tensor<2x3x8xf32>) -> tensor<6x8xf32>
  %n = stablehlo.negate %z : tensor<6x8xf32>
  %h = stablehlo.reshape %n : (tensor<6x8xf32>) -> tensor<2x3x8xf32>
  return %y, %g, %h : tensor<6x8xf32>, tensor<6x8xf32>, tensor<2x3x8xf32>
}
// CHECK: %0 = stablehlo.broadcast_in_dim %arg1, dims = [0, 1]
// CHECK-NEXT: %1 = stablehlo.multiply %arg0, %0
// CHECK-NEXT: %2 = stablehlo.reshape %1
// CHECK-NEXT: %3 = stablehlo.exponential %arg0
// CHECK-NEXT: %4 = stablehlo.add %3, %3
// CHECK-NEXT: %5 = stablehlo.reshape %4
// CHECK-NEXT: %6 = stablehlo.negate %arg2
// CHECK-NEXT: %7 = stablehlo.reshape %6
// CHECK-NEXT: return %2, %5, %7
