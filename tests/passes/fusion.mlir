// PIPELINE: fusion
// The fusion pass (src/passes/fusion.c): loop fusions of elementwise and
// layout chains, input fusions of reductions, row fusions of reductions
// with the ops that use their result along the same rows, and what is not
// fused.

// Softmax (jax.nn.softmax over the last dim): max-reduce, exp of the
// difference, sum-reduce, divide. One "row" fusion (rule 5): the four
// groups of rules 1-4 (the exp feeds both the sum and the divide and, being
// expensive, is duplicated into neither) merge, one kernel per row.
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
// CHECK-NEXT: %0 = "hlo.fusion"(%arg0) <{kind = "row", name = "fusion.0"}> ({
// CHECK-NEXT: ^bb0(%arg1: tensor<2x8xf32>):
// CHECK-NEXT: %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
// CHECK-NEXT: %1 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %3 = stablehlo.subtract %arg1, %2 : tensor<2x8xf32>
// CHECK-NEXT: %4 = stablehlo.exponential %3 : tensor<2x8xf32>
// CHECK-NEXT: %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: %6 = stablehlo.broadcast_in_dim %5, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %7 = stablehlo.divide %4, %6 : tensor<2x8xf32>
// CHECK-NEXT: stablehlo.return %7 : tensor<2x8xf32>
// CHECK-NEXT: }) : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: return %0 : tensor<2x8xf32>
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
// LayerNorm over the last dim: one "row" fusion: both reduces, the mean and
// the variance (per-row values: computed once per row in the kernel, not
// once per element), the scale and the shift.
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
// CHECK-NEXT: %0 = "hlo.fusion"(%arg0, %arg1, %arg2) <{kind = "row", name = "fusion.0"}> ({
// CHECK-NEXT: ^bb0(%arg3: tensor<2x8xf32>, %arg4: tensor<8xf32>, %arg5: tensor<8xf32>):
// CHECK-NEXT: %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %1 = stablehlo.reduce(%arg3 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: %cst_0 = stablehlo.constant dense<8.000000e+00> : tensor<2xf32>
// CHECK-NEXT: %2 = stablehlo.divide %1, %cst_0 : tensor<2xf32>
// CHECK-NEXT: %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %4 = stablehlo.subtract %arg3, %3 : tensor<2x8xf32>
// CHECK-NEXT: %5 = stablehlo.multiply %4, %4 : tensor<2x8xf32>
// CHECK-NEXT: %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: %7 = stablehlo.divide %6, %cst_0 : tensor<2xf32>
// CHECK-NEXT: %cst_1 = stablehlo.constant dense<9.99999974E-6> : tensor<2xf32>
// CHECK-NEXT: %8 = stablehlo.add %7, %cst_1 : tensor<2xf32>
// CHECK-NEXT: %9 = stablehlo.rsqrt %8 : tensor<2xf32>
// CHECK-NEXT: %10 = stablehlo.broadcast_in_dim %9, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %11 = stablehlo.multiply %4, %10 : tensor<2x8xf32>
// CHECK-NEXT: %12 = stablehlo.broadcast_in_dim %arg4, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %13 = stablehlo.broadcast_in_dim %arg5, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %14 = stablehlo.multiply %11, %12 : tensor<2x8xf32>
// CHECK-NEXT: %15 = stablehlo.add %14, %13 : tensor<2x8xf32>
// CHECK-NEXT: stablehlo.return %15 : tensor<2x8xf32>
// CHECK-NEXT: }) : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: return %0 : tensor<2x8xf32>
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
// -----
// RMSNorm (llama) on a [1, 4, 8] activation whose per-row values have a
// unit dim ([1, 4, 1]): one "row" fusion.
func.func @main(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>) -> tensor<1x4x8xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<8.0> : tensor<1x4x1xf32>
  %eps = stablehlo.constant dense<1.0e-6> : tensor<1x4x1xf32>
  %sq = stablehlo.multiply %x, %x : tensor<1x4x8xf32>
  %s = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<1x4x8xf32>, tensor<f32>) -> tensor<1x4xf32>
  %s1 = stablehlo.broadcast_in_dim %s, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<1x4x1xf32>
  %ms = stablehlo.divide %s1, %n : tensor<1x4x1xf32>
  %me = stablehlo.add %ms, %eps : tensor<1x4x1xf32>
  %r = stablehlo.rsqrt %me : tensor<1x4x1xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0, 1, 2] : (tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
  %y = stablehlo.multiply %x, %rb : tensor<1x4x8xf32>
  %gb = stablehlo.broadcast_in_dim %g, dims = [2] : (tensor<8xf32>) -> tensor<1x4x8xf32>
  %y2 = stablehlo.multiply %y, %gb : tensor<1x4x8xf32>
  return %y2 : tensor<1x4x8xf32>
}
// CHECK: %0 = "hlo.fusion"(%arg0, %arg1) <{kind = "row", name = "fusion.0"}> ({
// CHECK: stablehlo.reduce
// CHECK: stablehlo.rsqrt
// CHECK: stablehlo.return
// CHECK-NEXT: }) : (tensor<1x4x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT: return %0 : tensor<1x4x8xf32>
// -----
// Multi-output: the residual sum feeds the RMSNorm (a row fusion) and is
// also a result of the program (read after the fusion): the sum joins the
// row fusion, which returns both (it is written once, never read back).
func.func @main(%x: tensor<4x8xf32>, %h: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<8.0> : tensor<4xf32>
  %a = stablehlo.add %x, %h : tensor<4x8xf32>
  %sq = stablehlo.multiply %a, %a : tensor<4x8xf32>
  %s = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %ms = stablehlo.divide %s, %n : tensor<4xf32>
  %r = stablehlo.rsqrt %ms : tensor<4xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %y = stablehlo.multiply %a, %rb : tensor<4x8xf32>
  return %y, %a : tensor<4x8xf32>, tensor<4x8xf32>
}
// CHECK: %0:2 = "hlo.fusion"(%arg0, %arg1) <{kind = "row", name = "fusion.0"}> ({
// CHECK: stablehlo.return %{{[0-9]+}}, %{{[0-9]+}} : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT: }) : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT: return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xf32>
// -----
// A reduce's per-row epilogue (the exp of each row's sum) joins it (a row
// fusion storing one value per row); the consumer that broadcasts the
// result along another dim (added to every row of an 8x4 matrix) is not of
// the row's index space and stays a loop fusion of its own.
func.func @main(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %e = stablehlo.exponential %s : tensor<4xf32>
  %sb = stablehlo.broadcast_in_dim %e, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
  %z = stablehlo.add %y, %sb : tensor<8x4xf32>
  return %z : tensor<8x4xf32>
}
// CHECK: %0 = "hlo.fusion"(%arg0) <{kind = "row", name = "fusion.0"}> ({
// CHECK: stablehlo.exponential
// CHECK: }) : (tensor<4x8xf32>) -> tensor<4xf32>
// CHECK-NEXT: %1 = "hlo.fusion"(%0, %arg1) <{kind = "loop", name = "fusion.1"}> ({
// CHECK: return %1 : tensor<8x4xf32>
// -----
// Multi-output with a sibling: the residual sum feeds the RMSNorm and, after
// the matmul, the next residual add (another fusion). The sum joins the row
// fusion (the first fusion that reads it); the later fusion reads it as the
// row fusion's second result: the sum is computed once and read back once.
func.func @main(%x: tensor<4x8xf32>, %h: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<8.0> : tensor<4xf32>
  %a = stablehlo.add %x, %h : tensor<4x8xf32>
  %sq = stablehlo.multiply %a, %a : tensor<4x8xf32>
  %s = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %ms = stablehlo.divide %s, %n : tensor<4xf32>
  %r = stablehlo.rsqrt %ms : tensor<4xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %y = stablehlo.multiply %a, %rb : tensor<4x8xf32>
  %d = stablehlo.dot_general %y, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %z = stablehlo.add %a, %d : tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}
// CHECK: %0:2 = "hlo.fusion"(%arg0, %arg1) <{kind = "row", name = "fusion.0"}> ({
// CHECK: stablehlo.return %{{[0-9]+}}, %{{[0-9]+}} : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK: %1 = stablehlo.dot_general %0#0, %arg2
// CHECK-NEXT: %2 = "hlo.fusion"(%0#1, %1) <{kind = "loop", name = "fusion.1"}> ({
// CHECK: return %2 : tensor<4x8xf32>
// -----
// Softmax whose result is reshaped (2x2 merged into 4) for a batched dot:
// the divide and the reshape are in the row fusion, which stores the merged
// shape (an affine store) and has one result; neither the exp nor the
// broadcast row sum is a result. (A stale "read through a merging reshape"
// bit, left on the exp and the broadcast by the reshape's group, kept them
// and the divide apart: two full-size results and a second kernel.)
func.func @main(%x: tensor<2x2x4x4xf32>, %v: tensor<4x4x3xf32>) -> tensor<4x4x3xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [3] : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x2x4xf32>) -> tensor<2x2x4x4xf32>
  %d = stablehlo.subtract %x, %mb : tensor<2x2x4x4xf32>
  %e = stablehlo.exponential %d : tensor<2x2x4x4xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0, 1, 2] : (tensor<2x2x4xf32>) -> tensor<2x2x4x4xf32>
  %r = stablehlo.divide %e, %sb : tensor<2x2x4x4xf32>
  %p = stablehlo.reshape %r : (tensor<2x2x4x4xf32>) -> tensor<4x4x4xf32>
  %o = stablehlo.dot_general %p, %v, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x4x4xf32>, tensor<4x4x3xf32>) -> tensor<4x4x3xf32>
  return %o : tensor<4x4x3xf32>
}
// CHECK: %0 = "hlo.fusion"(%arg0) <{kind = "row", name = "fusion.0"}> ({
// CHECK: %{{[0-9]+}} = stablehlo.divide %{{[0-9]+}}, %{{[0-9]+}} : tensor<2x2x4x4xf32>
// CHECK-NEXT: %{{[0-9]+}} = stablehlo.reshape %{{[0-9]+}} : (tensor<2x2x4x4xf32>) -> tensor<4x4x4xf32>
// CHECK-NEXT: stablehlo.return %{{[0-9]+}} : tensor<4x4x4xf32>
// CHECK-NEXT: }) : (tensor<2x2x4x4xf32>) -> tensor<4x4x4xf32>
// CHECK-NEXT: %1 = stablehlo.dot_general %0, %arg1
// CHECK-NOT: kind = "loop"
// -----
// The same with llama's causal mask (two iotas compared): the iotas, the
// compare and the mask's broadcast are recomputed inside the row kernel,
// never fusions (buffers) of their own.
func.func @main(%x: tensor<2x2x4x4xf32>, %v: tensor<4x4x3xf32>) -> tensor<4x4x3xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %big = stablehlo.constant dense<-1.0e+30> : tensor<2x2x4x4xf32>
  %i0 = stablehlo.iota dim = 0 : tensor<4x4xi32>
  %i1 = stablehlo.iota dim = 1 : tensor<4x4xi32>
  %c = stablehlo.compare GE, %i0, %i1, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
  %cb = stablehlo.broadcast_in_dim %c, dims = [2, 3] : (tensor<4x4xi1>) -> tensor<2x2x4x4xi1>
  %xm = stablehlo.select %cb, %x, %big : tensor<2x2x4x4xi1>, tensor<2x2x4x4xf32>
  %m = stablehlo.reduce(%xm init: %ninf) applies stablehlo.maximum across dimensions = [3] : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x2x4xf32>) -> tensor<2x2x4x4xf32>
  %d = stablehlo.subtract %xm, %mb : tensor<2x2x4x4xf32>
  %e = stablehlo.exponential %d : tensor<2x2x4x4xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0, 1, 2] : (tensor<2x2x4xf32>) -> tensor<2x2x4x4xf32>
  %r = stablehlo.divide %e, %sb : tensor<2x2x4x4xf32>
  %p = stablehlo.reshape %r : (tensor<2x2x4x4xf32>) -> tensor<4x4x4xf32>
  %o = stablehlo.dot_general %p, %v, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x4x4xf32>, tensor<4x4x3xf32>) -> tensor<4x4x3xf32>
  return %o : tensor<4x4x3xf32>
}
// CHECK: %0 = "hlo.fusion"(%arg0) <{kind = "row", name = "fusion.0"}> ({
// CHECK-NEXT: ^bb0(%arg2: tensor<2x2x4x4xf32>):
// CHECK-NEXT: stablehlo.iota dim = 0 : tensor<4x4xi32>
// CHECK-NEXT: stablehlo.iota dim = 1 : tensor<4x4xi32>
// CHECK: stablehlo.return %{{[0-9]+}} : tensor<4x4x4xf32>
// CHECK-NEXT: }) : (tensor<2x2x4x4xf32>) -> tensor<4x4x4xf32>
// CHECK-NEXT: %1 = stablehlo.dot_general %0, %arg1
// CHECK-NOT: kind = "loop"
// -----
// A mask read twice (before the max and after the divide): its group
// (iotas and compare, a 4x4 index space, neither the row's full nor its
// kept shape) is made of cheap ops only, so it joins the row fusion and is
// recomputed at each point that reads it (rule 5b).
func.func @main(%x: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %big = stablehlo.constant dense<-1.0e+30> : tensor<2x4x4xf32>
  %z = stablehlo.constant dense<0.0> : tensor<2x4x4xf32>
  %i0 = stablehlo.iota dim = 0 : tensor<4x4xi32>
  %i1 = stablehlo.iota dim = 1 : tensor<4x4xi32>
  %c = stablehlo.compare GE, %i0, %i1, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
  %cb = stablehlo.broadcast_in_dim %c, dims = [1, 2] : (tensor<4x4xi1>) -> tensor<2x4x4xi1>
  %xm = stablehlo.select %cb, %x, %big : tensor<2x4x4xi1>, tensor<2x4x4xf32>
  %m = stablehlo.reduce(%xm init: %ninf) applies stablehlo.maximum across dimensions = [2] : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x4xf32>
  %d = stablehlo.subtract %xm, %mb : tensor<2x4x4xf32>
  %e = stablehlo.exponential %d : tensor<2x4x4xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x4xf32>
  %r = stablehlo.divide %e, %sb : tensor<2x4x4xf32>
  %cb2 = stablehlo.broadcast_in_dim %c, dims = [1, 2] : (tensor<4x4xi1>) -> tensor<2x4x4xi1>
  %o = stablehlo.select %cb2, %r, %z : tensor<2x4x4xi1>, tensor<2x4x4xf32>
  return %o : tensor<2x4x4xf32>
}
// CHECK: %0 = "hlo.fusion"(%arg0) <{kind = "row", name = "fusion.0"}> ({
// CHECK-NEXT: ^bb0(%arg1: tensor<2x4x4xf32>):
// CHECK-NEXT: stablehlo.iota dim = 0 : tensor<4x4xi32>
// CHECK: }) : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
// CHECK-NEXT: return %0 : tensor<2x4x4xf32>
// CHECK-NOT: kind = "loop"

// -----

// A reverse is a layout op (its index map runs the reversed dims
// backwards): it joins the elementwise chain that reads it, one loop fusion.
func.func @main(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %r = stablehlo.reverse %x, dims = [1] : tensor<3x4xf32>
  %e = stablehlo.exponential %r : tensor<3x4xf32>
  %n = stablehlo.negate %e : tensor<3x4xf32>
  return %n : tensor<3x4xf32>
}
// CHECK: %0 = "hlo.fusion"(%arg0) <{kind = "loop", name = "fusion.0"}> ({
// CHECK-NEXT: ^bb0(%arg1: tensor<3x4xf32>):
// CHECK-NEXT: %1 = stablehlo.reverse %arg1, dims = [1] : tensor<3x4xf32>
// CHECK: }) : (tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: return %0 : tensor<3x4xf32>
