// PIPELINE: fusion
// The fusion pass (src/passes/fusion.c): loop fusions of elementwise and
// layout chains, input fusions of reductions, and what is not fused.

// Softmax (jax.nn.softmax over the last dim): max-reduce, exp of the
// difference, sum-reduce, divide. Four fusions and nothing else: the exp
// feeds both the sum and the divide, and being expensive it is not
// duplicated into both (three fusions needs multi-output fusion, later).
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
  %d = stablehlo.subtract %x, %mb : tensor<2x8xf32>
  %e = stablehlo.exponential %d : tensor<2x8xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
  %r = stablehlo.divide %e, %sb : tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}
// CHECK: func.func @main(%arg0: tensor<2x8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT: %0 = "hlo.fusion"(%arg0) <{kind = "input", name = "fusion.0"}> ({
// CHECK-NEXT: ^bb0(%arg1: tensor<2x8xf32>):
// CHECK-NEXT: %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
// CHECK-NEXT: %4 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: stablehlo.return %4 : tensor<2xf32>
// CHECK-NEXT: }) : (tensor<2x8xf32>) -> tensor<2xf32>
// CHECK-NEXT: %1 = "hlo.fusion"(%0, %arg0) <{kind = "loop", name = "fusion.1"}> ({
// CHECK-NEXT: ^bb0(%arg1: tensor<2xf32>, %arg2: tensor<2x8xf32>):
// CHECK-NEXT: %4 = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %5 = stablehlo.subtract %arg2, %4 : tensor<2x8xf32>
// CHECK-NEXT: %6 = stablehlo.exponential %5 : tensor<2x8xf32>
// CHECK-NEXT: stablehlo.return %6 : tensor<2x8xf32>
// CHECK-NEXT: }) : (tensor<2xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %2 = "hlo.fusion"(%1) <{kind = "input", name = "fusion.2"}> ({
// CHECK-NEXT: ^bb0(%arg1: tensor<2x8xf32>):
// CHECK-NEXT: %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %4 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: stablehlo.return %4 : tensor<2xf32>
// CHECK-NEXT: }) : (tensor<2x8xf32>) -> tensor<2xf32>
// CHECK-NEXT: %3 = "hlo.fusion"(%2, %1) <{kind = "loop", name = "fusion.3"}> ({
// CHECK-NEXT: ^bb0(%arg1: tensor<2xf32>, %arg2: tensor<2x8xf32>):
// CHECK-NEXT: %4 = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %5 = stablehlo.divide %arg2, %4 : tensor<2x8xf32>
// CHECK-NEXT: stablehlo.return %5 : tensor<2x8xf32>
// CHECK-NEXT: }) : (tensor<2xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: return %3 : tensor<2x8xf32>
// -----
// Bias + GELU (tanh approximation) after a dot: one loop fusion; the dot
// stays outside (output fusion is for later); the splat constants are
// copied into the fusion and disappear from @main.
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %c0 = stablehlo.constant dense<0.044715> : tensor<4x16xf32>
  %c1 = stablehlo.constant dense<0.797884583> : tensor<4x16xf32>
  %c2 = stablehlo.constant dense<1.0> : tensor<4x16xf32>
  %c3 = stablehlo.constant dense<0.5> : tensor<4x16xf32>
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<16xf32>) -> tensor<4x16xf32>
  %h = stablehlo.add %d, %bb : tensor<4x16xf32>
  %h2 = stablehlo.multiply %h, %h : tensor<4x16xf32>
  %h3 = stablehlo.multiply %h2, %h : tensor<4x16xf32>
  %t0 = stablehlo.multiply %c0, %h3 : tensor<4x16xf32>
  %t1 = stablehlo.add %h, %t0 : tensor<4x16xf32>
  %t2 = stablehlo.multiply %c1, %t1 : tensor<4x16xf32>
  %t3 = stablehlo.tanh %t2 : tensor<4x16xf32>
  %t4 = stablehlo.add %c2, %t3 : tensor<4x16xf32>
  %t5 = stablehlo.multiply %c3, %t4 : tensor<4x16xf32>
  %y = stablehlo.multiply %h, %t5 : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
// CHECK: func.func @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8x16xf32>, %arg2: tensor<16xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT: %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %1 = "hlo.fusion"(%arg2, %0) <{kind = "loop", name = "fusion.0"}> ({
// CHECK-NEXT: ^bb0(%arg3: tensor<16xf32>, %arg4: tensor<4x16xf32>):
// CHECK-NEXT: %2 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %3 = stablehlo.add %arg4, %2 : tensor<4x16xf32>
// CHECK-NEXT: %4 = stablehlo.multiply %3, %3 : tensor<4x16xf32>
// CHECK-NEXT: %5 = stablehlo.multiply %4, %3 : tensor<4x16xf32>
// CHECK-NEXT: %cst = stablehlo.constant dense<4.471500e-02> : tensor<4x16xf32>
// CHECK-NEXT: %6 = stablehlo.multiply %cst, %5 : tensor<4x16xf32>
// CHECK-NEXT: %7 = stablehlo.add %3, %6 : tensor<4x16xf32>
// CHECK-NEXT: %cst_0 = stablehlo.constant dense<0.797884583> : tensor<4x16xf32>
// CHECK-NEXT: %8 = stablehlo.multiply %cst_0, %7 : tensor<4x16xf32>
// CHECK-NEXT: %9 = stablehlo.tanh %8 : tensor<4x16xf32>
// CHECK-NEXT: %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<4x16xf32>
// CHECK-NEXT: %10 = stablehlo.add %cst_1, %9 : tensor<4x16xf32>
// CHECK-NEXT: %cst_2 = stablehlo.constant dense<5.000000e-01> : tensor<4x16xf32>
// CHECK-NEXT: %11 = stablehlo.multiply %cst_2, %10 : tensor<4x16xf32>
// CHECK-NEXT: %12 = stablehlo.multiply %3, %11 : tensor<4x16xf32>
// CHECK-NEXT: stablehlo.return %12 : tensor<4x16xf32>
// CHECK-NEXT: }) : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %1 : tensor<4x16xf32>
// -----
// LayerNorm over the last dim: each reduce is an input fusion with its
// producers (the square goes into the second); the mean and the variance
// (divides of 2 elements) are not fused through the broadcasts that would
// recompute them 8 times; the scale and shift join the last loop fusion.
func.func @main(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<8.0> : tensor<2xf32>
  %eps = stablehlo.constant dense<1.0e-5> : tensor<2xf32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %mean = stablehlo.divide %s, %n : tensor<2xf32>
  %mb = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
  %c = stablehlo.subtract %x, %mb : tensor<2x8xf32>
  %sq = stablehlo.multiply %c, %c : tensor<2x8xf32>
  %ss = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %var = stablehlo.divide %ss, %n : tensor<2xf32>
  %ve = stablehlo.add %var, %eps : tensor<2xf32>
  %r = stablehlo.rsqrt %ve : tensor<2xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
  %y = stablehlo.multiply %c, %rb : tensor<2x8xf32>
  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
  %y2 = stablehlo.multiply %y, %gb : tensor<2x8xf32>
  %y3 = stablehlo.add %y2, %bb : tensor<2x8xf32>
  return %y3 : tensor<2x8xf32>
}
// CHECK: func.func @main(%arg0: tensor<2x8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT: %0 = "hlo.fusion"(%arg0) <{kind = "input", name = "fusion.0"}> ({
// CHECK-NEXT: ^bb0(%arg3: tensor<2x8xf32>):
// CHECK-NEXT: %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %6 = stablehlo.reduce(%arg3 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: stablehlo.return %6 : tensor<2xf32>
// CHECK-NEXT: }) : (tensor<2x8xf32>) -> tensor<2xf32>
// CHECK-NEXT: %1 = "hlo.fusion"(%0) <{kind = "loop", name = "fusion.1"}> ({
// CHECK-NEXT: ^bb0(%arg3: tensor<2xf32>):
// CHECK-NEXT: %cst = stablehlo.constant dense<8.000000e+00> : tensor<2xf32>
// CHECK-NEXT: %6 = stablehlo.divide %arg3, %cst : tensor<2xf32>
// CHECK-NEXT: stablehlo.return %6 : tensor<2xf32>
// CHECK-NEXT: }) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT: %2 = "hlo.fusion"(%1, %arg0) <{kind = "loop", name = "fusion.2"}> ({
// CHECK-NEXT: ^bb0(%arg3: tensor<2xf32>, %arg4: tensor<2x8xf32>):
// CHECK-NEXT: %6 = stablehlo.broadcast_in_dim %arg3, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %7 = stablehlo.subtract %arg4, %6 : tensor<2x8xf32>
// CHECK-NEXT: stablehlo.return %7 : tensor<2x8xf32>
// CHECK-NEXT: }) : (tensor<2xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %3 = "hlo.fusion"(%2) <{kind = "input", name = "fusion.3"}> ({
// CHECK-NEXT: ^bb0(%arg3: tensor<2x8xf32>):
// CHECK-NEXT: %6 = stablehlo.multiply %arg3, %arg3 : tensor<2x8xf32>
// CHECK-NEXT: %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %7 = stablehlo.reduce(%6 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: stablehlo.return %7 : tensor<2xf32>
// CHECK-NEXT: }) : (tensor<2x8xf32>) -> tensor<2xf32>
// CHECK-NEXT: %4 = "hlo.fusion"(%3) <{kind = "loop", name = "fusion.4"}> ({
// CHECK-NEXT: ^bb0(%arg3: tensor<2xf32>):
// CHECK-NEXT: %cst = stablehlo.constant dense<8.000000e+00> : tensor<2xf32>
// CHECK-NEXT: %6 = stablehlo.divide %arg3, %cst : tensor<2xf32>
// CHECK-NEXT: %cst_0 = stablehlo.constant dense<9.99999974E-6> : tensor<2xf32>
// CHECK-NEXT: %7 = stablehlo.add %6, %cst_0 : tensor<2xf32>
// CHECK-NEXT: %8 = stablehlo.rsqrt %7 : tensor<2xf32>
// CHECK-NEXT: stablehlo.return %8 : tensor<2xf32>
// CHECK-NEXT: }) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT: %5 = "hlo.fusion"(%4, %2, %arg1, %arg2) <{kind = "loop", name = "fusion.5"}> ({
// CHECK-NEXT: ^bb0(%arg3: tensor<2xf32>, %arg4: tensor<2x8xf32>, %arg5: tensor<8xf32>, %arg6: tensor<8xf32>):
// CHECK-NEXT: %6 = stablehlo.broadcast_in_dim %arg3, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %7 = stablehlo.multiply %arg4, %6 : tensor<2x8xf32>
// CHECK-NEXT: %8 = stablehlo.broadcast_in_dim %arg5, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %9 = stablehlo.broadcast_in_dim %arg6, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %10 = stablehlo.multiply %7, %8 : tensor<2x8xf32>
// CHECK-NEXT: %11 = stablehlo.add %10, %9 : tensor<2x8xf32>
// CHECK-NEXT: stablehlo.return %11 : tensor<2x8xf32>
// CHECK-NEXT: }) : (tensor<2xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: return %5 : tensor<2x8xf32>
// -----
// An expensive producer with two consumers is not duplicated.
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %one = stablehlo.constant dense<1.0> : tensor<4xf32>
  %e = stablehlo.exponential %x : tensor<4xf32>
  %a = stablehlo.add %e, %one : tensor<4xf32>
  %b = stablehlo.multiply %e, %e : tensor<4xf32>
  %c = stablehlo.log %b : tensor<4xf32>
  return %a, %c : tensor<4xf32>, tensor<4xf32>
}
// CHECK: func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT: %0 = "hlo.fusion"(%arg0) <{kind = "loop", name = "fusion.0"}> ({
// CHECK-NEXT: ^bb0(%arg1: tensor<4xf32>):
// CHECK-NEXT: %3 = stablehlo.exponential %arg1 : tensor<4xf32>
// CHECK-NEXT: stablehlo.return %3 : tensor<4xf32>
// CHECK-NEXT: }) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %1 = "hlo.fusion"(%0) <{kind = "loop", name = "fusion.1"}> ({
// CHECK-NEXT: ^bb0(%arg1: tensor<4xf32>):
// CHECK-NEXT: %cst = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %3 = stablehlo.add %arg1, %cst : tensor<4xf32>
// CHECK-NEXT: stablehlo.return %3 : tensor<4xf32>
// CHECK-NEXT: }) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %2 = "hlo.fusion"(%0) <{kind = "loop", name = "fusion.2"}> ({
// CHECK-NEXT: ^bb0(%arg1: tensor<4xf32>):
// CHECK-NEXT: %3 = stablehlo.multiply %arg1, %arg1 : tensor<4xf32>
// CHECK-NEXT: %4 = stablehlo.log %3 : tensor<4xf32>
// CHECK-NEXT: stablehlo.return %4 : tensor<4xf32>
// CHECK-NEXT: }) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return %1, %2 : tensor<4xf32>, tensor<4xf32>
// -----
// An expensive op is not fused through a broadcast that would recompute it;
// a cheap one is.
func.func @main(%x: tensor<4xf32>, %y: tensor<16x4xf32>) -> (tensor<16x4xf32>, tensor<16x4xf32>) {
  %e = stablehlo.exponential %x : tensor<4xf32>
  %eb = stablehlo.broadcast_in_dim %e, dims = [1] : (tensor<4xf32>) -> tensor<16x4xf32>
  %a = stablehlo.add %eb, %y : tensor<16x4xf32>
  %n = stablehlo.negate %x : tensor<4xf32>
  %nb = stablehlo.broadcast_in_dim %n, dims = [1] : (tensor<4xf32>) -> tensor<16x4xf32>
  %b = stablehlo.add %nb, %y : tensor<16x4xf32>
  return %a, %b : tensor<16x4xf32>, tensor<16x4xf32>
}
// CHECK: func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<16x4xf32>) -> (tensor<16x4xf32>, tensor<16x4xf32>) {
// CHECK-NEXT: %0 = "hlo.fusion"(%arg0) <{kind = "loop", name = "fusion.0"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<4xf32>):
// CHECK-NEXT: %3 = stablehlo.exponential %arg2 : tensor<4xf32>
// CHECK-NEXT: stablehlo.return %3 : tensor<4xf32>
// CHECK-NEXT: }) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %1 = "hlo.fusion"(%0, %arg1) <{kind = "loop", name = "fusion.1"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<4xf32>, %arg3: tensor<16x4xf32>):
// CHECK-NEXT: %3 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<4xf32>) -> tensor<16x4xf32>
// CHECK-NEXT: %4 = stablehlo.add %3, %arg3 : tensor<16x4xf32>
// CHECK-NEXT: stablehlo.return %4 : tensor<16x4xf32>
// CHECK-NEXT: }) : (tensor<4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
// CHECK-NEXT: %2 = "hlo.fusion"(%arg0, %arg1) <{kind = "loop", name = "fusion.2"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<4xf32>, %arg3: tensor<16x4xf32>):
// CHECK-NEXT: %3 = stablehlo.negate %arg2 : tensor<4xf32>
// CHECK-NEXT: %4 = stablehlo.broadcast_in_dim %3, dims = [1] : (tensor<4xf32>) -> tensor<16x4xf32>
// CHECK-NEXT: %5 = stablehlo.add %4, %arg3 : tensor<16x4xf32>
// CHECK-NEXT: stablehlo.return %5 : tensor<16x4xf32>
// CHECK-NEXT: }) : (tensor<4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
// CHECK-NEXT: return %1, %2 : tensor<16x4xf32>, tensor<16x4xf32>
