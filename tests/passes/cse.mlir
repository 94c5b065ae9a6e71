// PIPELINE: cse
// Identical pure ops merge; side effects, different attributes or types
// and ops in other blocks do not.

func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = stablehlo.add %x, %y : tensor<4xf32>
  %b = stablehlo.add %x, %y : tensor<4xf32>
  %c = stablehlo.multiply %a, %x : tensor<4xf32>
  %d = stablehlo.multiply %b, %x : tensor<4xf32>
  return %a, %b, %c, %d : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
// CHECK: %0 = stablehlo.add %arg0, %arg1
// CHECK-NEXT: %1 = stablehlo.multiply %0, %arg0
// CHECK-NEXT: return %0, %0, %1, %1

// -----
// Float add is not merged across operand order (NaN payloads); integer add is.
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi32>, %j: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>) {
  %a = stablehlo.add %x, %y : tensor<4xf32>
  %b = stablehlo.add %y, %x : tensor<4xf32>
  %c = stablehlo.add %i, %j : tensor<4xi32>
  %d = stablehlo.add %j, %i : tensor<4xi32>
  return %a, %b, %c, %d : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>
}
// CHECK: %0 = stablehlo.add %arg0, %arg1
// CHECK-NEXT: %1 = stablehlo.add %arg1, %arg0
// CHECK-NEXT: %2 = stablehlo.add %arg2, %arg3
// CHECK-NEXT: return %0, %1, %2, %2

// -----
// Equal constants merge; different values, attributes or types do not.
func.func @main(%x: tensor<2x3xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x3xf32>) {
  %a = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 5.0]> : tensor<4xf32>
  %d = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %e = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %f = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %g = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %h = stablehlo.transpose %g, dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %a, %b, %c, %d, %e, %f, %h : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x3xf32>
}
// CHECK: %cst = stablehlo.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
// CHECK-NEXT: %cst_0 = stablehlo.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 5.000000e+00]>
// CHECK-NEXT: %c = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
// CHECK-NEXT: %0 = stablehlo.transpose %arg0
// CHECK-NEXT: %1 = stablehlo.reshape %arg0
// CHECK-NEXT: %2 = stablehlo.transpose %0
// CHECK-NEXT: return %cst, %cst, %cst_0, %c, %0, %1, %2

// -----
// Side effects are never merged; regions are their own scope; ops with
// regions are not merged.
func.func @main(%x: tensor<4xf32>, %p: tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = stablehlo.custom_call @f(%x) {has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %b = stablehlo.custom_call @f(%x) {has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %n = stablehlo.negate %x : tensor<4xf32>
  %c = "stablehlo.if"(%p) ({
    %m = stablehlo.negate %x : tensor<4xf32>
    %k = stablehlo.negate %x : tensor<4xf32>
    %s = stablehlo.add %m, %k : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }, {
    stablehlo.return %n : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  return %a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
// CHECK: %0 = stablehlo.custom_call @f(%arg0)
// CHECK-NEXT: %1 = stablehlo.custom_call @f(%arg0)
// CHECK-NEXT: %2 = stablehlo.negate %arg0
// CHECK-NEXT: %3 = "stablehlo.if"(%arg1) ({
// CHECK-NEXT: %4 = stablehlo.negate %arg0
// CHECK-NEXT: %5 = stablehlo.add %4, %4
