// PIPELINE: reduction-layout-normalizer
// A reduce over dimensions that are not the trailing ones reads a transpose
// moving them last (kept dims first in order, reduced dims ascending) and
// reduces the trailing ones; reduces over trailing dims are left alone.

func.func @main(%x: tensor<2x16x2x2x8xf32>, %y: tensor<8x4xf32>, %z: tensor<3x5xf32>) -> (tensor<2x16x2x8xf32>, tensor<4xf32>, tensor<3xf32>) {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [3] : (tensor<2x16x2x2x8xf32>, tensor<f32>) -> tensor<2x16x2x8xf32>
  %1 = stablehlo.reduce(%y init: %c) applies stablehlo.add across dimensions = [0] : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = stablehlo.reduce(%z init: %c) applies stablehlo.maximum across dimensions = [1] : (tensor<3x5xf32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1, %2 : tensor<2x16x2x8xf32>, tensor<4xf32>, tensor<3xf32>
}
// CHECK: stablehlo.transpose %arg0, dims = [0, 1, 2, 4, 3] : (tensor<2x16x2x2x8xf32>) -> tensor<2x16x2x8x2xf32>
// CHECK: applies stablehlo.add across dimensions = [4] : (tensor<2x16x2x8x2xf32>, tensor<f32>) -> tensor<2x16x2x8xf32>
// CHECK: stablehlo.transpose %arg1, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>
// CHECK: applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: stablehlo.reduce(%arg2 init: {{.*}}) applies stablehlo.maximum across dimensions = [1]

// -----
// Several reduced dims, not adjacent: both move last, ascending; a
// variadic reduce (argmax-style) transposes every input alike.
func.func @main(%x: tensor<3x4x5x6xf32>, %v: tensor<4x3xf32>, %i: tensor<4x3xi32>) -> (tensor<4x6xf32>, tensor<3xf32>, tensor<3xi32>) {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %ci = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [2, 0] : (tensor<3x4x5x6xf32>, tensor<f32>) -> tensor<4x6xf32>
  %1:2 = stablehlo.reduce(%v init: %c), (%i init: %ci) across dimensions = [0] : (tensor<4x3xf32>, tensor<4x3xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)
    reducer(%a: tensor<f32>, %b: tensor<f32>) (%ia: tensor<i32>, %ib: tensor<i32>) {
      %m = stablehlo.maximum %a, %b : tensor<f32>
      %n = stablehlo.maximum %ia, %ib : tensor<i32>
      stablehlo.return %m, %n : tensor<f32>, tensor<i32>
    }
  return %0, %1#0, %1#1 : tensor<4x6xf32>, tensor<3xf32>, tensor<3xi32>
}
// CHECK: stablehlo.transpose %arg0, dims = [1, 3, 0, 2] : (tensor<3x4x5x6xf32>) -> tensor<4x6x3x5xf32>
// CHECK: across dimensions = [2, 3] : (tensor<4x6x3x5xf32>, tensor<f32>) -> tensor<4x6xf32>
// CHECK: stablehlo.transpose %arg1, dims = [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>
// CHECK: stablehlo.transpose %arg2, dims = [1, 0] : (tensor<4x3xi32>) -> tensor<3x4xi32>
