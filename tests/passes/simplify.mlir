// PIPELINE: simplify
// The rules of src/passes/simplify.c, one piece each: what fires, and
// where a rule must not fire (its validity condition).

// x + 0 -> x for integers, both operand orders.
func.func @main(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %z = stablehlo.constant dense<0> : tensor<4xi32>
  %a = stablehlo.add %x, %z : tensor<4xi32>
  %b = stablehlo.add %z, %x : tensor<4xi32>
  return %a, %b : tensor<4xi32>, tensor<4xi32>
}
// CHECK: func.func @main(%arg0: tensor<4xi32>)
// CHECK-NEXT: return %arg0, %arg0
// CHECK-NOT: stablehlo.add

// -----
// Not for floats: -0 + +0 is +0.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<4xf32>
  %a = stablehlo.add %x, %z : tensor<4xf32>
  return %a : tensor<4xf32>
}
// CHECK: stablehlo.add %arg0, %cst : tensor<4xf32>

// -----
// x - 0 -> x (integers); x * 1 -> x (ints and floats); x * 0 -> 0 (ints only).
func.func @main(%x: tensor<4xi32>, %y: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>) {
  %z = stablehlo.constant dense<0> : tensor<4xi32>
  %o = stablehlo.constant dense<1> : tensor<4xi32>
  %fo = stablehlo.constant dense<1.0> : tensor<4xf32>
  %fz = stablehlo.constant dense<0.0> : tensor<4xf32>
  %a = stablehlo.subtract %x, %z : tensor<4xi32>
  %b = stablehlo.multiply %o, %x : tensor<4xi32>
  %c = stablehlo.multiply %y, %fo : tensor<4xf32>
  %d = stablehlo.multiply %x, %z : tensor<4xi32>
  %e = stablehlo.multiply %y, %fz : tensor<4xf32>
  return %a, %b, %c, %d, %e : tensor<4xi32>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>
}
// CHECK: %c = stablehlo.constant dense<0> : tensor<4xi32>
// CHECK: %0 = stablehlo.multiply %arg1, %cst
// CHECK: return %arg0, %arg0, %arg1, %c, %0

// -----
// Not x * 1 for complex: (a+bi)(1+0i) computes b*0, NaN when b is inf.
func.func @main(%x: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %o = stablehlo.constant dense<(1.0, 0.0)> : tensor<2xcomplex<f32>>
  %a = stablehlo.multiply %x, %o : tensor<2xcomplex<f32>>
  return %a : tensor<2xcomplex<f32>>
}
// CHECK: stablehlo.multiply %arg0

// -----
// Bitwise identities: x & x, x | x, max/min(x, x); x & ~0, x & 0, x | 0, x | ~0.
func.func @main(%x: tensor<4xui8>, %p: tensor<4xi1>) -> (tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xi1>, tensor<4xi1>) {
  %ones = stablehlo.constant dense<255> : tensor<4xui8>
  %z = stablehlo.constant dense<0> : tensor<4xui8>
  %t = stablehlo.constant dense<true> : tensor<4xi1>
  %a = stablehlo.and %x, %x : tensor<4xui8>
  %b = stablehlo.or %x, %x : tensor<4xui8>
  %c = stablehlo.maximum %x, %x : tensor<4xui8>
  %d = stablehlo.minimum %x, %x : tensor<4xui8>
  %e = stablehlo.and %ones, %x : tensor<4xui8>
  %f = stablehlo.and %x, %z : tensor<4xui8>
  %g = stablehlo.or %p, %t : tensor<4xi1>
  %h = stablehlo.and %p, %t : tensor<4xi1>
  return %a, %b, %c, %d, %e, %f, %g, %h : tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xi1>, tensor<4xi1>
}
// CHECK: return %arg0, %arg0, %arg0, %arg0, %arg0, %c{{.*}}, %c{{.*}}, %arg1
// CHECK-NOT: stablehlo.and
// CHECK-NOT: stablehlo.or
// CHECK-NOT: stablehlo.maximum
// CHECK-NOT: stablehlo.minimum

// -----
// Not max(x, x) for floats (NaN operands are left to the op).
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = stablehlo.maximum %x, %x : tensor<4xf32>
  return %a : tensor<4xf32>
}
// CHECK: stablehlo.maximum %arg0, %arg0

// -----
// Involutions: -(-x), not(not(x)); a single negate stays.
func.func @main(%x: tensor<4xf32>, %y: tensor<4xi8>) -> (tensor<4xf32>, tensor<4xi8>, tensor<4xf32>) {
  %a = stablehlo.negate %x : tensor<4xf32>
  %b = stablehlo.negate %a : tensor<4xf32>
  %c = stablehlo.not %y : tensor<4xi8>
  %d = stablehlo.not %c : tensor<4xi8>
  return %b, %d, %a : tensor<4xf32>, tensor<4xi8>, tensor<4xf32>
}
// CHECK: %0 = stablehlo.negate %arg0
// CHECK-NEXT: return %arg0, %arg1, %0
// CHECK-NOT: stablehlo.not

// -----
// convert to the same type goes; a real convert stays.
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xbf16>) {
  %a = stablehlo.convert %x : tensor<4xf32>
  %b = stablehlo.convert %x : (tensor<4xf32>) -> tensor<4xbf16>
  return %a, %b : tensor<4xf32>, tensor<4xbf16>
}
// CHECK: %0 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK-NEXT: return %arg0, %0

// -----
// select with a constant predicate (splat or scalar), and with equal branches.
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>, %p: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %t = stablehlo.constant dense<true> : tensor<4xi1>
  %f = stablehlo.constant dense<false> : tensor<i1>
  %a = stablehlo.select %t, %x, %y : tensor<4xi1>, tensor<4xf32>
  %b = stablehlo.select %f, %x, %y : tensor<i1>, tensor<4xf32>
  %c = stablehlo.select %p, %y, %y : tensor<4xi1>, tensor<4xf32>
  return %a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
// CHECK: return %arg0, %arg1, %arg1
// CHECK-NOT: stablehlo.select

// -----
// get_tuple_element of a tuple.
func.func @main(%x: tensor<4xf32>, %y: tensor<i32>) -> tensor<i32> {
  %t = stablehlo.tuple %x, %y : tuple<tensor<4xf32>, tensor<i32>>
  %e = stablehlo.get_tuple_element %t[1] : (tuple<tensor<4xf32>, tensor<i32>>) -> tensor<i32>
  return %e : tensor<i32>
}
// CHECK: return %arg1
// CHECK-NOT: get_tuple_element

// -----
// Layout ops of a splat constant become splat constants of the result type;
// chains of broadcasts, reshapes and transposes of one operand compose.
func.func @main() -> (tensor<2x3xf32>, tensor<6xf32>, tensor<3x2xf32>) {
  %c = stablehlo.constant dense<2.5> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<3x2xf32>
  %r = stablehlo.reshape %b : (tensor<3x2xf32>) -> tensor<6xf32>
  %t = stablehlo.transpose %b, dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %t, %r, %b : tensor<2x3xf32>, tensor<6xf32>, tensor<3x2xf32>
}
// CHECK: stablehlo.constant dense<2.500000e+00> : tensor<3x2xf32>
// CHECK: stablehlo.constant dense<2.500000e+00> : tensor<6xf32>
// CHECK: stablehlo.constant dense<2.500000e+00> : tensor<2x3xf32>
// CHECK-NOT: broadcast_in_dim
// CHECK-NOT: reshape
// CHECK-NOT: transpose

// -----
// broadcast_in_dim: identity goes; broadcast of broadcast composes the dims.
func.func @main(%x: tensor<3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<4x3x2xf32>) {
  %a = stablehlo.broadcast_in_dim %y, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %c = stablehlo.broadcast_in_dim %b, dims = [2, 1] : (tensor<2x3xf32>) -> tensor<4x3x2xf32>
  return %a, %c : tensor<2x3xf32>, tensor<4x3x2xf32>
}
// CHECK: %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<3xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT: return %arg1, %0

// -----
// transpose: identity goes; two compose, and cancel when inverse.
func.func @main(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %a = stablehlo.transpose %x, dims = [0, 1, 2] : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %b = stablehlo.transpose %x, dims = [1, 2, 0] : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %c = stablehlo.transpose %b, dims = [1, 2, 0] : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  %d = stablehlo.transpose %b, dims = [2, 0, 1] : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  return %a, %c, %d : tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>
}
// CHECK: %0 = stablehlo.transpose %arg0, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT: return %arg0, %0, %arg0

// -----
// reshape: to the same type goes; reshape of reshape is one reshape (or
// none); reshape of a broadcast scalar is a broadcast.
func.func @main(%x: tensor<2x6xf32>, %s: tensor<f32>) -> (tensor<2x6xf32>, tensor<3x4xf32>, tensor<2x6xf32>, tensor<4x2xf32>) {
  %a = stablehlo.reshape %x : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %b = stablehlo.reshape %x : (tensor<2x6xf32>) -> tensor<12xf32>
  %c = stablehlo.reshape %b : (tensor<12xf32>) -> tensor<3x4xf32>
  %d = stablehlo.reshape %b : (tensor<12xf32>) -> tensor<2x6xf32>
  %e = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %f = stablehlo.reshape %e : (tensor<8xf32>) -> tensor<4x2xf32>
  return %a, %c, %d, %f : tensor<2x6xf32>, tensor<3x4xf32>, tensor<2x6xf32>, tensor<4x2xf32>
}
// CHECK: %0 = stablehlo.reshape %arg0 : (tensor<2x6xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: %1 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
// CHECK-NEXT: return %arg0, %0, %arg0, %1

// -----
// slice: of the full extent goes; slice of slice composes start and stride.
func.func @main(%x: tensor<20xf32>) -> (tensor<20xf32>, tensor<3xf32>) {
  %a = stablehlo.slice %x [0:20] : (tensor<20xf32>) -> tensor<20xf32>
  %b = stablehlo.slice %x [2:18:2] : (tensor<20xf32>) -> tensor<8xf32>
  %c = stablehlo.slice %b [1:7:3] : (tensor<8xf32>) -> tensor<2xf32>
  %d = stablehlo.slice %b [5:8] : (tensor<8xf32>) -> tensor<3xf32>
  return %a, %d : tensor<20xf32>, tensor<3xf32>
}
// CHECK: %0 = stablehlo.slice %arg0 [12:17:2] : (tensor<20xf32>) -> tensor<3xf32>
// CHECK-NEXT: return %arg0, %0

// -----
// dynamic_slice of the full size, dynamic_update_slice of the full shape.
func.func @main(%x: tensor<4x3xf32>, %u: tensor<4x3xf32>, %i: tensor<i32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x3xf32>) {
  %a = stablehlo.dynamic_slice %x, %i, %i, sizes = [4, 3] : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
  %b = stablehlo.dynamic_update_slice %x, %u, %i, %i : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
  %c = stablehlo.dynamic_slice %x, %i, %i, sizes = [2, 3] : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  return %a, %b, %c : tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x3xf32>
}
// CHECK: %0 = stablehlo.dynamic_slice %arg0, %arg2, %arg2, sizes = [2, 3]
// CHECK-NEXT: return %arg0, %arg1, %0

// -----
// concatenate of one operand, pad by zero, reverse of size-1 dims and twice.
func.func @main(%x: tensor<4x1xf32>, %v: tensor<f32>) -> (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %a = stablehlo.concatenate %x, dim = 0 : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %b = stablehlo.pad %x, %v, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %c = stablehlo.reverse %x, dims = [1] : tensor<4x1xf32>
  %d = stablehlo.reverse %x, dims = [0] : tensor<4x1xf32>
  %e = stablehlo.reverse %d, dims = [0] : tensor<4x1xf32>
  return %a, %b, %c, %d, %e : tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}
// CHECK: %0 = stablehlo.reverse %arg0, dims = [0] : tensor<4x1xf32>
// CHECK-NEXT: return %arg0, %arg0, %arg0, %0, %arg0
// CHECK-NOT: concatenate
// CHECK-NOT: stablehlo.pad

// -----
// Quantized types are never touched (their ops are dequantize-op-quantize).
func.func @main(%x: tensor<4x!quant.uniform<i8:f32, 0.5>>) -> tensor<4x!quant.uniform<i8:f32, 0.5>> {
  %a = stablehlo.transpose %x, dims = [0] : (tensor<4x!quant.uniform<i8:f32, 0.5>>) -> tensor<4x!quant.uniform<i8:f32, 0.5>>
  return %a : tensor<4x!quant.uniform<i8:f32, 0.5>>
}
// CHECK: stablehlo.transpose %arg0

// -----
// Unused pure ops go on the way; side effects stay.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = stablehlo.exponential %x : tensor<4xf32>
  %b = stablehlo.custom_call @foo(%x) {has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  return %x : tensor<4xf32>
}
// CHECK: stablehlo.custom_call @foo(%arg0)
// CHECK-NOT: exponential

// -----
// slice of slice with an empty result: [0:0], not a start past the end.
func.func @main(%x: tensor<10xf32>) -> tensor<0xf32> {
  %a = stablehlo.slice %x [0:10:3] : (tensor<10xf32>) -> tensor<4xf32>
  %b = stablehlo.slice %a [4:4] : (tensor<4xf32>) -> tensor<0xf32>
  return %b : tensor<0xf32>
}
// CHECK: stablehlo.slice %arg0 [0:0] : (tensor<10xf32>) -> tensor<0xf32>
