// PIPELINE: constant-fold,dce
// FLAGS: --fold-limit 64
// Ops on constants are evaluated by the interpreter's kernels; equal
// elements give a splat; results over the limit (64 here), broadcasts of
// non-splat constants, rng and side effects stay.

func.func @main() -> (tensor<4xi32>, tensor<4xf32>, tensor<2x2xf32>) {
  %a = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %b = stablehlo.constant dense<[10, 20, 30, 40]> : tensor<4xi32>
  %c = stablehlo.multiply %a, %b : tensor<4xi32>
  %d = stablehlo.add %c, %a : tensor<4xi32>
  %f = stablehlo.convert %d : (tensor<4xi32>) -> tensor<4xf32>
  %g = stablehlo.sqrt %f : tensor<4xf32>
  %h = stablehlo.reshape %g : (tensor<4xf32>) -> tensor<2x2xf32>
  return %d, %g, %h : tensor<4xi32>, tensor<4xf32>, tensor<2x2xf32>
}
// CHECK: %c = stablehlo.constant dense<[11, 42, 93, 164]> : tensor<4xi32>
// CHECK-NEXT: %cst = stablehlo.constant dense<[3.31662488, 6.48074054, 9.643651, 12.8062487]> : tensor<4xf32>
// CHECK-NEXT: %cst_0 = stablehlo.constant dense<{{\[\[}}3.31662488, 6.48074054], [9.643651, 12.8062487]]> : tensor<2x2xf32>
// CHECK-NEXT: return %c, %cst, %cst_0
// CHECK-NOT: stablehlo.multiply
// CHECK-NOT: stablehlo.sqrt

// -----
// Equal elements give a splat constant.
func.func @main() -> tensor<8xf32> {
  %a = stablehlo.constant dense<[1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0]> : tensor<8xf32>
  %b = stablehlo.abs %a : tensor<8xf32>
  return %b : tensor<8xf32>
}
// CHECK: stablehlo.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-NOT: stablehlo.abs

// -----
// Over the size limit: kept. A broadcast of a non-splat constant: kept; of
// a splat: folded to a splat.
func.func @main() -> (tensor<100xf32>, tensor<4x2xf32>, tensor<4x2xf32>) {
  %a = stablehlo.constant dense<2.0> : tensor<100xf32>
  %b = stablehlo.exponential %a : tensor<100xf32>
  %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %d = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
  %e = stablehlo.constant dense<3.0> : tensor<f32>
  %f = stablehlo.broadcast_in_dim %e, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
  return %b, %d, %f : tensor<100xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}
// CHECK: stablehlo.exponential
// CHECK: stablehlo.broadcast_in_dim %cst_0, dims = [1]
// CHECK-NEXT: stablehlo.constant dense<3.000000e+00> : tensor<4x2xf32>
// CHECK-NOT: tensor<f32>

// -----
// rng_bit_generator and custom calls are never folded; ops with regions are
// not folded, but ops inside regions are.
func.func @main() -> (tensor<2xui64>, tensor<4xui32>, tensor<f32>, tensor<i32>) {
  %s = stablehlo.constant dense<[1, 2]> : tensor<2xui64>
  %ns, %bits = stablehlo.rng_bit_generator %s, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
  %w = stablehlo.constant dense<0> : tensor<i32>
  %l = stablehlo.while(%it = %w) : tensor<i32>
  cond {
    %c3 = stablehlo.constant dense<3> : tensor<i32>
    %c4 = stablehlo.constant dense<4> : tensor<i32>
    %lim = stablehlo.add %c3, %c4 : tensor<i32>
    %p = stablehlo.compare LT, %it, %lim : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %n = stablehlo.add %it, %one : tensor<i32>
    stablehlo.return %n : tensor<i32>
  }
  return %ns, %bits, %r, %l : tensor<2xui64>, tensor<4xui32>, tensor<f32>, tensor<i32>
}
// CHECK: stablehlo.rng_bit_generator
// CHECK: stablehlo.reduce
// CHECK: cond {
// CHECK-NEXT: stablehlo.constant dense<7> : tensor<i32>
// CHECK-NEXT: stablehlo.compare LT, %iterArg
