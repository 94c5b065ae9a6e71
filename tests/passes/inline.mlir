// PIPELINE: inline
// Calls and composites are replaced by their callee's body (recursively);
// private functions left without a reference go, public ones stay.

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = call @twice(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = call @twice(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %c = stablehlo.composite "my.square" %b {decomposition = @square} : (tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}
func.func private @twice(%y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @id(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = stablehlo.add %0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @id(%y: tensor<4xf32>) -> tensor<4xf32> {
  return %y : tensor<4xf32>
}
func.func private @square(%y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %y, %y : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func public @other(%y: tensor<4xf32>) -> tensor<4xf32> {
  return %y : tensor<4xf32>
}
// CHECK: func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %0 = stablehlo.add %arg0, %arg0
// CHECK-NEXT: %1 = stablehlo.add %0, %0
// CHECK-NEXT: %2 = stablehlo.multiply %1, %1
// CHECK-NEXT: return %2
// CHECK: func.func public @other
// CHECK-NOT: call
// CHECK-NOT: composite
// CHECK-NOT: @twice
// CHECK-NOT: @square

// -----
// Calls inside regions (a while body) are inlined there.
func.func @main(%x: tensor<i32>) -> tensor<i32> {
  %r = stablehlo.while(%it = %x) : tensor<i32>
  cond {
    %c = stablehlo.constant dense<10> : tensor<i32>
    %p = stablehlo.compare LT, %it, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %n = func.call @inc(%it) : (tensor<i32>) -> tensor<i32>
    stablehlo.return %n : tensor<i32>
  }
  return %r : tensor<i32>
}
func.func private @inc(%y: tensor<i32>) -> tensor<i32> {
  %one = stablehlo.constant dense<1> : tensor<i32>
  %0 = stablehlo.add %y, %one : tensor<i32>
  return %0 : tensor<i32>
}
// CHECK: stablehlo.while
// CHECK: } do {
// CHECK-NEXT: %c{{.*}} = stablehlo.constant dense<1> : tensor<i32>
// CHECK-NEXT: stablehlo.add %iterArg, %c
// CHECK-NOT: call
// CHECK-NOT: @inc
