// PIPELINE: fusion,fusion
// The fusion pass in the bodies of while, if and case, and rules about
// constants and reshapes. Running it twice changes nothing more.

// The body of a while loop is fused too; the condition's compare is a fusion
// of its own; a reduce over a leading dim and a dot stay unfused.
func.func @main(%x: tensor<4x3xf32>, %w: tensor<3x3xf32>) -> tensor<3xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %i0, %v = %x) : tensor<i32>, tensor<4x3xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %d = stablehlo.dot_general %v, %w, contracting_dims = [1] x [0] : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
      %t = stablehlo.tanh %d : tensor<4x3xf32>
      %h = stablehlo.constant dense<0.5> : tensor<4x3xf32>
      %s = stablehlo.multiply %t, %h : tensor<4x3xf32>
      stablehlo.return %i1, %s : tensor<i32>, tensor<4x3xf32>
    }
  %red = stablehlo.reduce(%r#1 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %red : tensor<3xf32>
}
// CHECK: func.func @main(%arg0: tensor<4x3xf32>, %arg1: tensor<3x3xf32>) -> tensor<3xf32> {
// CHECK-NEXT: %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %c = stablehlo.constant dense<0> : tensor<i32>
// CHECK-NEXT: %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<4x3xf32>
// CHECK-NEXT: cond {
// CHECK-NEXT: %2 = "hlo.fusion"(%iterArg) <{kind = "loop", name = "fusion.0"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<i32>):
// CHECK-NEXT: %c_1 = stablehlo.constant dense<3> : tensor<i32>
// CHECK-NEXT: %3 = stablehlo.compare LT, %arg2, %c_1 : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK-NEXT: stablehlo.return %3 : tensor<i1>
// CHECK-NEXT: }) : (tensor<i32>) -> tensor<i1>
// CHECK-NEXT: stablehlo.return %2 : tensor<i1>
// CHECK-NEXT: } do {
// CHECK-NEXT: %2 = "hlo.fusion"(%iterArg) <{kind = "loop", name = "fusion.1"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<i32>):
// CHECK-NEXT: %c_1 = stablehlo.constant dense<1> : tensor<i32>
// CHECK-NEXT: %5 = stablehlo.add %arg2, %c_1 : tensor<i32>
// CHECK-NEXT: stablehlo.return %5 : tensor<i32>
// CHECK-NEXT: }) : (tensor<i32>) -> tensor<i32>
// CHECK-NEXT: %3 = stablehlo.dot_general %iterArg_0, %arg1, contracting_dims = [1] x [0] : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %4 = "hlo.fusion"(%3) <{kind = "loop", name = "fusion.2"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<4x3xf32>):
// CHECK-NEXT: %5 = stablehlo.tanh %arg2 : tensor<4x3xf32>
// CHECK-NEXT: %cst_1 = stablehlo.constant dense<5.000000e-01> : tensor<4x3xf32>
// CHECK-NEXT: %6 = stablehlo.multiply %5, %cst_1 : tensor<4x3xf32>
// CHECK-NEXT: stablehlo.return %6 : tensor<4x3xf32>
// CHECK-NEXT: }) : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: stablehlo.return %2, %4 : tensor<i32>, tensor<4x3xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %1 = stablehlo.reduce(%0#1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT: return %1 : tensor<3xf32>
// -----
// The branches of if and case are fused per region; the predicate's
// compare is a fusion outside.
func.func @main(%p: tensor<i32>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %c = stablehlo.compare GT, %p, %z : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %r = "stablehlo.if"(%c) ({
    %e = stablehlo.exponential %x : tensor<4xf32>
    %n = stablehlo.negate %e : tensor<4xf32>
    stablehlo.return %n : tensor<4xf32>
  }, {
    %a = stablehlo.abs %x : tensor<4xf32>
    stablehlo.return %a : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  %s = "stablehlo.case"(%p) ({
    %l = stablehlo.log %x : tensor<4xf32>
    %m = stablehlo.multiply %l, %l : tensor<4xf32>
    stablehlo.return %m : tensor<4xf32>
  }, {
    stablehlo.return %x : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  return %r, %s : tensor<4xf32>, tensor<4xf32>
}
// CHECK: func.func @main(%arg0: tensor<i32>, %arg1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT: %0 = "hlo.fusion"(%arg0) <{kind = "loop", name = "fusion.3"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<i32>):
// CHECK-NEXT: %c = stablehlo.constant dense<0> : tensor<i32>
// CHECK-NEXT: %3 = stablehlo.compare GT, %arg2, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK-NEXT: stablehlo.return %3 : tensor<i1>
// CHECK-NEXT: }) : (tensor<i32>) -> tensor<i1>
// CHECK-NEXT: %1 = "stablehlo.if"(%0) ({
// CHECK-NEXT: %3 = "hlo.fusion"(%arg1) <{kind = "loop", name = "fusion.0"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<4xf32>):
// CHECK-NEXT: %4 = stablehlo.exponential %arg2 : tensor<4xf32>
// CHECK-NEXT: %5 = stablehlo.negate %4 : tensor<4xf32>
// CHECK-NEXT: stablehlo.return %5 : tensor<4xf32>
// CHECK-NEXT: }) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: stablehlo.return %3 : tensor<4xf32>
// CHECK-NEXT: }, {
// CHECK-NEXT: %3 = "hlo.fusion"(%arg1) <{kind = "loop", name = "fusion.1"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<4xf32>):
// CHECK-NEXT: %4 = stablehlo.abs %arg2 : tensor<4xf32>
// CHECK-NEXT: stablehlo.return %4 : tensor<4xf32>
// CHECK-NEXT: }) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: stablehlo.return %3 : tensor<4xf32>
// CHECK-NEXT: }) : (tensor<i1>) -> tensor<4xf32>
// CHECK-NEXT: %2 = "stablehlo.case"(%arg0) ({
// CHECK-NEXT: %3 = "hlo.fusion"(%arg1) <{kind = "loop", name = "fusion.2"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<4xf32>):
// CHECK-NEXT: %4 = stablehlo.log %arg2 : tensor<4xf32>
// CHECK-NEXT: %5 = stablehlo.multiply %4, %4 : tensor<4xf32>
// CHECK-NEXT: stablehlo.return %5 : tensor<4xf32>
// CHECK-NEXT: }) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: stablehlo.return %3 : tensor<4xf32>
// CHECK-NEXT: }, {
// CHECK-NEXT: stablehlo.return %arg1 : tensor<4xf32>
// CHECK-NEXT: }) : (tensor<i32>) -> tensor<4xf32>
// CHECK-NEXT: return %1, %2 : tensor<4xf32>, tensor<4xf32>
// -----
// A non-splat constant is an operand of the fusion; a splat one is copied in.
// Layout ops are fused below a reshape that splits dims (or adds unit
// dims), not below one that merges them (its index map needs div/mod,
// which lower_fusion cannot compose with a transpose).
func.func @main(%x: tensor<4x6xf32>, %y: tensor<6x4xf32>) -> (tensor<1x4x6xf32>, tensor<2x12xf32>, tensor<4x2x3xf32>) {
  %k = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
  %two = stablehlo.constant dense<2.0> : tensor<4x6xf32>
  %kb = stablehlo.broadcast_in_dim %k, dims = [1] : (tensor<6xf32>) -> tensor<4x6xf32>
  %a = stablehlo.add %x, %kb : tensor<4x6xf32>
  %a2 = stablehlo.multiply %a, %two : tensor<4x6xf32>
  %ar = stablehlo.reshape %a2 : (tensor<4x6xf32>) -> tensor<1x4x6xf32>
  %yt = stablehlo.transpose %y, dims = [1, 0] : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %yr = stablehlo.reshape %yt : (tensor<4x6xf32>) -> tensor<2x12xf32>
  %zt = stablehlo.transpose %y, dims = [1, 0] : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %zr = stablehlo.reshape %zt : (tensor<4x6xf32>) -> tensor<4x2x3xf32>
  return %ar, %yr, %zr : tensor<1x4x6xf32>, tensor<2x12xf32>, tensor<4x2x3xf32>
}
// CHECK: func.func @main(%arg0: tensor<4x6xf32>, %arg1: tensor<6x4xf32>) -> (tensor<1x4x6xf32>, tensor<2x12xf32>, tensor<4x2x3xf32>) {
// CHECK-NEXT: %cst = stablehlo.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00]> : tensor<6xf32>
// CHECK-NEXT: %0 = "hlo.fusion"(%cst, %arg0) <{kind = "loop", name = "fusion.0"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<6xf32>, %arg3: tensor<4x6xf32>):
// CHECK-NEXT: %4 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: %5 = stablehlo.add %arg3, %4 : tensor<4x6xf32>
// CHECK-NEXT: %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<4x6xf32>
// CHECK-NEXT: %6 = stablehlo.multiply %5, %cst_0 : tensor<4x6xf32>
// CHECK-NEXT: %7 = stablehlo.reshape %6 : (tensor<4x6xf32>) -> tensor<1x4x6xf32>
// CHECK-NEXT: stablehlo.return %7 : tensor<1x4x6xf32>
// CHECK-NEXT: }) : (tensor<6xf32>, tensor<4x6xf32>) -> tensor<1x4x6xf32>
// CHECK-NEXT: %1 = "hlo.fusion"(%arg1) <{kind = "loop", name = "fusion.1"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<6x4xf32>):
// CHECK-NEXT: %4 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<6x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: stablehlo.return %4 : tensor<4x6xf32>
// CHECK-NEXT: }) : (tensor<6x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: %2 = "hlo.fusion"(%1) <{kind = "loop", name = "fusion.2"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<4x6xf32>):
// CHECK-NEXT: %4 = stablehlo.reshape %arg2 : (tensor<4x6xf32>) -> tensor<2x12xf32>
// CHECK-NEXT: stablehlo.return %4 : tensor<2x12xf32>
// CHECK-NEXT: }) : (tensor<4x6xf32>) -> tensor<2x12xf32>
// CHECK-NEXT: %3 = "hlo.fusion"(%arg1) <{kind = "loop", name = "fusion.3"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<6x4xf32>):
// CHECK-NEXT: %4 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<6x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: %5 = stablehlo.reshape %4 : (tensor<4x6xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT: stablehlo.return %5 : tensor<4x2x3xf32>
// CHECK-NEXT: }) : (tensor<6x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT: return %0, %2, %3 : tensor<1x4x6xf32>, tensor<2x12xf32>, tensor<4x2x3xf32>
