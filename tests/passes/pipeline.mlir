// PIPELINE: inline,chlo-legalize,simplify,constant-fold,simplify,cse,dce
// The default pipeline on the shapes JAX prints: a private helper called
// twice, shape arithmetic on constants, duplicated broadcasts.
func.func public @main(%x: tensor<8x4xf32>, %w: tensor<4xf32>) -> (tensor<8x4xf32>, tensor<2xi32>) {
  %0 = call @scale(%x, %w) : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %1 = call @scale(%0, %w) : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %s = stablehlo.constant dense<[2, 3]> : tensor<2xi32>
  %t = stablehlo.constant dense<[5, 7]> : tensor<2xi32>
  %u = stablehlo.multiply %s, %t : tensor<2xi32>
  %z = stablehlo.constant dense<0> : tensor<2xi32>
  %v = stablehlo.add %u, %z : tensor<2xi32>
  %y = chlo.broadcast_add %1, %w : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  return %y, %v : tensor<8x4xf32>, tensor<2xi32>
}
func.func private @scale(%a: tensor<8x4xf32>, %w: tensor<4xf32>) -> tensor<8x4xf32> {
  %b = stablehlo.broadcast_in_dim %w, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
  %t = stablehlo.transpose %b, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %tt = stablehlo.transpose %t, dims = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %m = stablehlo.multiply %a, %tt : tensor<8x4xf32>
  %one = stablehlo.constant dense<1.0> : tensor<8x4xf32>
  %r = stablehlo.multiply %m, %one : tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
// CHECK: func.func public @main(%arg0: tensor<8x4xf32>, %arg1: tensor<4xf32>)
// CHECK-NEXT: %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %1 = stablehlo.multiply %arg0, %0
// CHECK-NEXT: %2 = stablehlo.multiply %1, %0
// CHECK-NEXT: %c = stablehlo.constant dense<[10, 21]> : tensor<2xi32>
// CHECK-NEXT: %3 = stablehlo.add %2, %0
// CHECK-NEXT: return %3, %c
// CHECK-NOT: @scale
// CHECK-NOT: chlo
// CHECK-NOT: transpose
