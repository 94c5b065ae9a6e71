// PIPELINE: dce
// Unused pure ops go (chains too, and ops whose regions are pure); side
// effects and ops with impure regions stay; unreferenced private functions go.

func.func @main(%x: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
  %a = stablehlo.exponential %x : tensor<4xf32>
  %b = stablehlo.add %a, %a : tensor<4xf32>
  %c = stablehlo.custom_call @keep(%x) {has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %d = "stablehlo.if"(%p) ({
    %m = stablehlo.negate %x : tensor<4xf32>
    stablehlo.return %m : tensor<4xf32>
  }, {
    stablehlo.return %x : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  %e = "stablehlo.if"(%p) ({
    %k = stablehlo.custom_call @effect(%x) {has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
    %dead = stablehlo.sine %x : tensor<4xf32>
    stablehlo.return %k : tensor<4xf32>
  }, {
    stablehlo.return %x : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  return %x : tensor<4xf32>
}
func.func private @unused(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @used_by_custom_call(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @used_by_used(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @used_by_used(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @public_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @foo(%x) {called_computations = [@used_by_custom_call]} : (tensor<4xf32>) -> tensor<4xf32>
  return %x : tensor<4xf32>
}
// CHECK: func.func @main
// CHECK-NEXT: stablehlo.custom_call @keep(%arg0)
// CHECK-NEXT: "stablehlo.if"(%arg1) ({
// CHECK-NEXT: stablehlo.custom_call @effect(%arg0)
// CHECK-NEXT: stablehlo.return
// CHECK: return %arg0
// CHECK: func.func private @used_by_custom_call
// CHECK: func.func private @used_by_used
// CHECK: func.func @public_kept
// CHECK-NOT: exponential
// CHECK-NOT: stablehlo.negate
// CHECK-NOT: stablehlo.sine
// CHECK-NOT: @unused
