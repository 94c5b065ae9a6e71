// PIPELINE: duplicate-generators
// A value computed only from iotas and constants (threefry's counter
// `iota * 8 + iota`) that several fusible ops read is copied, whole chain,
// before each reader after the first; a non-fusible reader (return) keeps
// the original.

func.func @main(%x: tensor<4x8xui32>, %y: tensor<4x8xui32>) -> (tensor<4x8xui32>, tensor<4x8xui32>, tensor<4x8xui32>) {
  %i = stablehlo.iota dim = 0 : tensor<4x8xui32>
  %j = stablehlo.iota dim = 1 : tensor<4x8xui32>
  %c = stablehlo.constant dense<8> : tensor<ui32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui32>) -> tensor<4x8xui32>
  %m = stablehlo.multiply %i, %b : tensor<4x8xui32>
  %n = stablehlo.add %m, %j : tensor<4x8xui32>
  %p = stablehlo.add %x, %n : tensor<4x8xui32>
  %q = stablehlo.xor %y, %n : tensor<4x8xui32>
  return %p, %q, %n : tensor<4x8xui32>, tensor<4x8xui32>, tensor<4x8xui32>
}
// CHECK: %0 = stablehlo.iota dim = 0
// CHECK-NEXT: %1 = stablehlo.iota dim = 1
// CHECK-NEXT: %c = stablehlo.constant dense<8>
// CHECK-NEXT: %2 = stablehlo.broadcast_in_dim %c
// CHECK-NEXT: %3 = stablehlo.multiply %0, %2
// CHECK-NEXT: %4 = stablehlo.add %3, %1
// CHECK-NEXT: %5 = stablehlo.add %arg0, %4
// CHECK-NEXT: %6 = stablehlo.broadcast_in_dim %c
// CHECK-NEXT: %7 = stablehlo.iota dim = 0
// CHECK-NEXT: %8 = stablehlo.multiply %7, %6
// CHECK-NEXT: %9 = stablehlo.iota dim = 1
// CHECK-NEXT: %10 = stablehlo.add %8, %9
// CHECK-NEXT: %11 = stablehlo.xor %arg1, %10
// CHECK-NEXT: return %5, %11, %4

// -----
// One fusible reader (the dot_general is not fusible): nothing is copied;
// a value that reads an argument is no generator.
func.func @main(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %i = stablehlo.iota dim = 0 : tensor<4x4xf32>
  %d = stablehlo.dot_general %i, %x, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = stablehlo.add %i, %x : tensor<4x4xf32>
  %n = stablehlo.negate %x : tensor<4x4xf32>
  %u = stablehlo.add %n, %x : tensor<4x4xf32>
  %v = stablehlo.multiply %n, %x : tensor<4x4xf32>
  return %d, %a, %u, %v : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
// CHECK: %0 = stablehlo.iota dim = 0
// CHECK-NEXT: %1 = stablehlo.dot_general %0, %arg0
// CHECK-NEXT: %2 = stablehlo.add %0, %arg0
// CHECK-NEXT: %3 = stablehlo.negate %arg0
// CHECK-NEXT: %4 = stablehlo.add %3, %arg0
// CHECK-NEXT: %5 = stablehlo.multiply %3, %arg0
// CHECK-NEXT: return %1, %2, %4, %5

// -----
// A reader in a nested region keeps the original; the readers of the
// block itself get copies.
func.func @main(%x: tensor<4xf32>, %p: tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %i = stablehlo.iota dim = 0 : tensor<4xf32>
  %a = stablehlo.add %i, %x : tensor<4xf32>
  %b = stablehlo.multiply %i, %x : tensor<4xf32>
  %r = "stablehlo.if"(%p) ({
    %s = stablehlo.subtract %i, %x : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }, {
    stablehlo.return %x : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  return %a, %b, %r : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
// CHECK: %0 = stablehlo.iota dim = 0
// CHECK-NEXT: %1 = stablehlo.add %0, %arg0
// CHECK-NEXT: %2 = stablehlo.iota dim = 0
// CHECK-NEXT: %3 = stablehlo.multiply %2, %arg0
// CHECK-NEXT: %4 = "stablehlo.if"(%arg1)
// CHECK-NEXT: %5 = stablehlo.subtract %0, %arg0
