// Negative cases for the verifier (tests/unit/test_verify.c): each piece
// breaks one constraint of the StableHLO spec; the comment names the
// expected message (a substring) and the line it must point at.

func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{add (C1)}}
  %0 = stablehlo.add %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @main(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xf32> {
  // expected-error@+1 {{multiply (C1): lhs and rhs element types differ}}
  %0 = "stablehlo.multiply"(%a, %b) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{and (I1): lhs must be a tensor of boolean or integer type}}
  %0 = stablehlo.and %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{shift_left (I1)}}
  %0 = stablehlo.shift_left %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{sqrt (I1): operand must be a tensor of floating-point or complex type}}
  %0 = stablehlo.sqrt %a : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error@+1 {{exponential (C1): result element type}}
  %0 = "stablehlo.exponential"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{is_finite (O1)}}
  %0 = "stablehlo.is_finite"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xcomplex<f32>>) -> tensor<4xf64> {
  // expected-error@+1 {{abs (C2)}}
  %0 = "stablehlo.abs"(%a) : (tensor<4xcomplex<f32>>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<5xi32> {
  // expected-error@+1 {{convert (C1)}}
  %0 = stablehlo.convert %a : (tensor<4xf32>) -> tensor<5xi32>
  return %0 : tensor<5xi32>
}

// -----

func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{compare (O1)}}
  %0 = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error@+1 {{compare (C3): compare_type FLOAT}}
  %0 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @main(%a: tensor<4xi32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  // expected-error@+1 {{compare (C1)}}
  %0 = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction EQ>} : (tensor<4xi32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @main(%p: tensor<3xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{select (C1)}}
  %0 = stablehlo.select %p, %a, %a : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%p: tensor<i1>, %a: tensor<4xf32>, %b: tensor<4xf64>) -> tensor<4xf32> {
  // expected-error@+1 {{select (C2)}}
  %0 = "stablehlo.select"(%p, %a, %b) : (tensor<i1>, tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%mn: tensor<3xf32>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{clamp (C1)}}
  %0 = stablehlo.clamp %mn, %a, %a : (tensor<3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{broadcast_in_dim (C5)}}
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @main(%a: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{broadcast_in_dim (C2)}}
  %0 = stablehlo.broadcast_in_dim %a, dims = [0, 1] : (tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @main(%a: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{broadcast_in_dim (C3)}}
  %0 = stablehlo.broadcast_in_dim %a, dims = [5] : (tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @main(%a: tensor<2x2xf32>) -> tensor<2x2x3xf32> {
  // expected-error@+1 {{broadcast_in_dim (C4)}}
  %0 = stablehlo.broadcast_in_dim %a, dims = [0, 0] : (tensor<2x2xf32>) -> tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}

// -----

func.func @main(%a: tensor<2xf32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{broadcast_in_dim (C1)}}
  %0 = "stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

func.func @main(%a: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error@+1 {{reshape (C2): operand has 6 elements, result 7}}
  %0 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{transpose (C2)}}
  %0 = stablehlo.transpose %a, dims = [1, 1] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{transpose (C3)}}
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @main(%a: tensor<8xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{slice (C3)}}
  %0 = "stablehlo.slice"(%a) {start_indices = array<i64: 2>, limit_indices = array<i64: 9>, strides = array<i64: 1>} : (tensor<8xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @main(%a: tensor<8xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{slice (C5): result dimension 0 is 3, expected 4}}
  %0 = "stablehlo.slice"(%a) {start_indices = array<i64: 0>, limit_indices = array<i64: 8>, strides = array<i64: 2>} : (tensor<8xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @main(%a: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{slice (C4)}}
  %0 = "stablehlo.slice"(%a) {start_indices = array<i64: 0>, limit_indices = array<i64: 4>, strides = array<i64: 0>} : (tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<8x8xf32>, %i: tensor<i32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{dynamic_slice (C2)}}
  %0 = "stablehlo.dynamic_slice"(%a, %i) {slice_sizes = array<i64: 2, 2>} : (tensor<8x8xf32>, tensor<i32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @main(%a: tensor<8xf32>, %i: tensor<i32>) -> tensor<9xf32> {
  // expected-error@+1 {{dynamic_slice (C4)}}
  %0 = "stablehlo.dynamic_slice"(%a, %i) {slice_sizes = array<i64: 9>} : (tensor<8xf32>, tensor<i32>) -> tensor<9xf32>
  return %0 : tensor<9xf32>
}

// -----

func.func @main(%a: tensor<8x8xf32>, %i: tensor<i32>, %j: tensor<i64>) -> tensor<2x2xf32> {
  // expected-error@+1 {{dynamic_slice (C3)}}
  %0 = "stablehlo.dynamic_slice"(%a, %i, %j) {slice_sizes = array<i64: 2, 2>} : (tensor<8x8xf32>, tensor<i32>, tensor<i64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @main(%a: tensor<4xf32>, %u: tensor<5xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  // expected-error@+1 {{dynamic_update_slice (C6)}}
  %0 = "stablehlo.dynamic_update_slice"(%a, %u, %i) : (tensor<4xf32>, tensor<5xf32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{concatenate (C2)}}
  %0 = "stablehlo.concatenate"(%a, %b) {dimension = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<5x3xf32> {
  // expected-error@+1 {{concatenate (C6)}}
  %0 = "stablehlo.concatenate"(%a, %b) {dimension = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{concatenate (C4)}}
  %0 = "stablehlo.concatenate"(%a, %b) {dimension = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @main(%a: tensor<4xf32>, %p: tensor<f32>) -> tensor<10xf32> {
  // expected-error@+1 {{pad (C4): result dimension 0 is 10, expected 9}}
  %0 = "stablehlo.pad"(%a, %p) {edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 1>, interior_padding = array<i64: 1>} : (tensor<4xf32>, tensor<f32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

func.func @main(%a: tensor<4xf32>, %p: tensor<f32>) -> tensor<4xf32> {
  // expected-error@+1 {{pad (C3)}}
  %0 = "stablehlo.pad"(%a, %p) {edge_padding_low = array<i64: 0>, edge_padding_high = array<i64: 3>, interior_padding = array<i64: -1>} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main() -> tensor<4xi32> {
  // expected-error@+1 {{iota (C1)}}
  %0 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{reverse (C3)}}
  %0 = "stablehlo.reverse"(%a) {dimensions = array<i64: 2>} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @main() -> tensor<3xf32> {
  // expected-error@+1 {{constant (C1)}}
  %0 = "stablehlo.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @main(%a: tensor<2x64xf32>, %b: tensor<32x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{dot_general (C10): contracting dimension sizes differ (lhs 64 vs rhs 32)}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x64xf32>, tensor<32x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @main(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{dot_general (C12)}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @main(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{dot_general (C6)}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [2] x [0] : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @main(%a: tensor<3x2x8xf32>, %b: tensor<4x8x5xf32>) -> tensor<3x2x5xf32> {
  // expected-error@+1 {{dot_general (C9)}}
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<3x2x8xf32>, tensor<4x8x5xf32>) -> tensor<3x2x5xf32>
  return %0 : tensor<3x2x5xf32>
}

// -----

func.func @main(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{dot_general (C2)}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0, 1] : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @main(%a: tensor<4x6xf32>, %z: tensor<f32>) -> tensor<5xf32> {
  // expected-error@+1 {{reduce (C7)}}
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @main(%a: tensor<4x6xf32>, %z: tensor<f32>) -> tensor<4xf32> {
  // expected-error@+1 {{reduce (C4)}}
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [3] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4x6xf32>, %z: tensor<i32>) -> tensor<4xf32> {
  // expected-error@+1 {{reduce (C2)}}
  %0 = "stablehlo.reduce"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {dimensions = array<i64: 1>} : (tensor<4x6xf32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4x6xf32>, %z: tensor<f32>) -> tensor<4xf32> {
  // expected-error@+1 {{reduce (C6)}}
  %0 = "stablehlo.reduce"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.convert %x : (tensor<f32>) -> tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {dimensions = array<i64: 1>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4x6xf32>, %z: tensor<f32>) -> tensor<2x6xf32> {
  // expected-error@+1 {{reduce_window (C15)}}
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.maximum %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 1, 1>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @main(%a: tensor<4x6xf32>, %z: tensor<f32>) -> tensor<3x6xf32> {
  // expected-error@+1 {{reduce_window (C4)}}
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.maximum %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

func.func @main(%a: tensor<4x6xf32>, %z: tensor<f32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{reduce_window (C7)}}
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.maximum %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 1, 1>, window_strides = array<i64: 1, 0>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @main(%a: tensor<1x8x8x3xf32>, %k: tensor<3x3x4x16xf32>) -> tensor<1x6x6x16xf32> {
  // expected-error@+1 {{convolution (C14)}}
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x4x16xf32>) -> tensor<1x6x6x16xf32>
  return %0 : tensor<1x6x6x16xf32>
}

// -----

func.func @main(%a: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x16xf32>) -> tensor<1x7x6x16xf32> {
  // expected-error@+1 {{convolution (C25)}}
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x7x6x16xf32>
  return %0 : tensor<1x7x6x16xf32>
}

// -----

func.func @main(%a: tensor<3x4xf32>, %i: tensor<2x1xi32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{gather (C21)}}
  %0 = "stablehlo.gather"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 5>} : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @main(%a: tensor<3x4xf32>, %i: tensor<2x1xi32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{gather (C22)}}
  %0 = "stablehlo.gather"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>} : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @main(%a: tensor<3x4xf32>, %i: tensor<2x1xi32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{gather (C1)}}
  %0 = "stablehlo.gather"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>} : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @main(%a: tensor<3x4xf32>, %i: tensor<2x1xi32>, %u: tensor<2x5xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{scatter (C4)}}
  %0 = "stablehlo.scatter"(%a, %i, %u) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    stablehlo.return %y : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x5xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @main(%a: tensor<3x4xf32>, %i: tensor<2x1xi32>, %u: tensor<2x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{scatter (C23)}}
  %0 = "stablehlo.scatter"(%a, %i, %u) ({
  ^bb0(%x: tensor<f32>):
    stablehlo.return %x : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{sort (C5): comparator must return tensor<i1>}}
  %0 = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    stablehlo.return %x : tensor<f32>
  }) {dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{sort (C4)}}
  %0 = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%n: tensor<i32>) -> tensor<i32> {
  // expected-error@+1 {{while (C1): cond must return tensor<i1>}}
  %0 = "stablehlo.while"(%n) ({
  ^bb0(%x: tensor<i32>):
    stablehlo.return %x : tensor<i32>
  }, {
  ^bb0(%x: tensor<i32>):
    stablehlo.return %x : tensor<i32>
  }) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

func.func @main(%n: tensor<i32>) -> tensor<i32> {
  // expected-error@+1 {{while (C2)}}
  %0 = "stablehlo.while"(%n) ({
  ^bb0(%x: tensor<i32>):
    %c = stablehlo.compare LT, %x, %x : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<i32>):
    %f = stablehlo.convert %x : (tensor<i32>) -> tensor<f32>
    stablehlo.return %f : tensor<f32>
  }) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

func.func @main(%p: tensor<i1>, %a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{if (C2)}}
  %0 = "stablehlo.if"(%p) ({
    stablehlo.return %a : tensor<2xf32>
  }, {
    stablehlo.return %b : tensor<3xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @main(%p: tensor<i32>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{if (I1): pred must be tensor<i1>}}
  %0 = "stablehlo.if"(%p) ({
    stablehlo.return %a : tensor<2xf32>
  }, {
    stablehlo.return %a : tensor<2xf32>
  }) : (tensor<i32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @main(%i: tensor<i32>, %a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32> {
  // expected-error@+1 {{case (C3)}}
  %0 = "stablehlo.case"(%i) ({
    stablehlo.return %a : tensor<2xf32>
  }, {
    stablehlo.return %b : tensor<2xi32>
  }) : (tensor<i32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.negate %a : tensor<2x3xf32>
  // expected-error@+1 {{func.return (SIG): operand #0 has type tensor<2x3xf32> but @main returns tensor<3x2xf32>}}
  return %0 : tensor<2x3xf32>
}

// -----

func.func @main(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  // expected-error@+1 {{func.return (SIG): returns 1 value(s)}}
  return %a : tensor<2xf32>
}

// -----

func.func private @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{func.call (SIG): argument #0 has type tensor<3xf32> but '@f' expects tensor<2xf32>}}
  %0 = func.call @f(%a) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{func.call (SIG): callee '@nowhere' is not defined}}
  %0 = func.call @nowhere(%a) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{get_tuple_element (I1)}}
  %0 = "stablehlo.get_tuple_element"(%a) {index = 0 : i32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>, %b: tensor<2xi32>) -> tuple<tensor<4xf32>, tensor<2xi32>> {
  %t = "stablehlo.tuple"(%a, %b) : (tensor<4xf32>, tensor<2xi32>) -> tuple<tensor<4xf32>, tensor<2xi32>>
  // expected-error@+1 {{get_tuple_element (C1)}}
  %e = "stablehlo.get_tuple_element"(%t) {index = 2 : i32} : (tuple<tensor<4xf32>, tensor<2xi32>>) -> tensor<4xf32>
  return %t : tuple<tensor<4xf32>, tensor<2xi32>>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error@+1 {{bitcast_convert (C1)}}
  %0 = stablehlo.bitcast_convert %a : (tensor<4xf32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @main(%s: tensor<2xui64>) -> (tensor<3xui64>, tensor<4xui32>) {
  // expected-error@+1 {{rng_bit_generator (C1)}}
  %0:2 = "stablehlo.rng_bit_generator"(%s) {rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>} : (tensor<2xui64>) -> (tensor<3xui64>, tensor<4xui32>)
  return %0#0, %0#1 : tensor<3xui64>, tensor<4xui32>
}

// -----

func.func @main(%a: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{triangular_solve (C3)}}
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @main(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{cholesky (C3)}}
  %0 = "stablehlo.cholesky"(%a) {lower = true} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @main(%a: tensor<8xf32>) -> tensor<8xcomplex<f32>> {
  // expected-error@+1 {{fft (C5)}}
  %0 = "stablehlo.fft"(%a) {fft_type = #stablehlo<fft_type RFFT>, fft_length = array<i64: 8>} : (tensor<8xf32>) -> tensor<8xcomplex<f32>>
  return %0 : tensor<8xcomplex<f32>>
}

// -----

func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{map (C4)}}
  %0 = "stablehlo.map"(%a, %b) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4x6xf32>, %s: tensor<2x6xf32>, %z: tensor<f32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{select_and_scatter (C2)}}
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %t = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) {window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 1, 1>} : (tensor<4x6xf32>, tensor<2x6xf32>, tensor<f32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @main(%a: tensor<4x6xf32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{all_gather (C1)}}
  %0 = "stablehlo.all_gather"(%a) {all_gather_dim = 2 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{custom_call (ATTR): missing required attribute 'call_target_name'}}
  %0 = "stablehlo.custom_call"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{custom_call (ATTR): expects operandIndex in the output_operand_alias attribute to be in range [0, 1); got: 5}}
  %0 = stablehlo.custom_call @foo(%a) {output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 5, operand_tuple_indices = []>]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<8xi32> {
  // expected-error@+1 {{custom_call (ATTR): shapes mismatch in the output_operand_alias attribute: operand 0 and result 0 have different types}}
  %0 = stablehlo.custom_call @foo(%a) {output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]} : (tensor<4xf32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

func.func @main(%a: tensor<?x4xf32>, %b: tensor<4x3xf32>) -> tensor<?x5xf32> {
  // expected-error@+1 {{dot_general (C12)}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}

// -----

func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{add (SIG): expects 2 operand(s), got 1}}
  %0 = "stablehlo.add"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>, %b: tensor<4xi32>, %z: tensor<f32>, %zi: tensor<i32>) -> (tensor<f32>, tensor<i32>) {
  // expected-error@+1 {{reduce (C6): input element type of tensor<4xi32> is not promotable to body type tensor<i16>}}
  %0:2 = "stablehlo.reduce"(%a, %b, %z, %zi) ({
  ^bb0(%x: tensor<f32>, %y: tensor<i16>, %u: tensor<f32>, %v: tensor<i16>):
    stablehlo.return %x, %y : tensor<f32>, tensor<i16>
  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
  return %0#0, %0#1 : tensor<f32>, tensor<i32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{reduce_precision (C2)}}
  %0 = "stablehlo.reduce_precision"(%a) {exponent_bits = 0 : i32, mantissa_bits = 2 : i32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{popcnt (I1)}}
  %0 = stablehlo.popcnt %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{floor (I1)}}
  %0 = stablehlo.floor %a : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xcomplex<f64>> {
  // expected-error@+1 {{complex (C3)}}
  %0 = "stablehlo.complex"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xcomplex<f64>>
  return %0 : tensor<4xcomplex<f64>>
}

// -----

func.func @main(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{all_to_all (C2)}}
  %0 = "stablehlo.all_to_all"(%a) {split_dimension = 0 : i64, concat_dimension = 1 : i64, split_count = 3 : i64, replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{optimization_barrier (SIG)}}
  %0 = "stablehlo.optimization_barrier"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----


func.func @main(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{batch_norm_inference (C3)}}
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %s, %s, %s) {epsilon = 1.0e-5 : f32, feature_index = 2 : i64} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

func.func @main(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{batch_norm_training (C1)}}
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %s) {epsilon = 1.0e-5 : f32, feature_index = 3 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<2x3x4xf32>
}

// -----

func.func @main(%a: tensor<i32>, %b: tensor<i32>, %s: tensor<1xi64>) -> tensor<4xi32> {
  // expected-error@+1 {{rng (C2)}}
  %0 = "stablehlo.rng"(%a, %b, %s) {rng_distribution = #stablehlo<rng_distribution NORMAL>} : (tensor<i32>, tensor<i32>, tensor<1xi64>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @main(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{dot (C2)}}
  %0 = "stablehlo.dot"(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @main(%a: tensor<3xi32>) -> tensor<2x4xi32> {
  // expected-error@+1 {{broadcast (C2)}}
  %0 = "stablehlo.broadcast"(%a) {broadcast_sizes = array<i64: 2>} : (tensor<3xi32>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// -----

func.func @main(%a: tensor<3xf32>, %s: tensor<2xi64>) -> tensor<?x4xf32> {
  // expected-error@+1 {{dynamic_broadcast_in_dim (C5)}}
  %0 = "stablehlo.dynamic_broadcast_in_dim"(%a, %s) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>, %s: tensor<3xi64>) -> tensor<?x4xf32> {
  // expected-error@+1 {{dynamic_broadcast_in_dim (C7)}}
  %0 = "stablehlo.dynamic_broadcast_in_dim"(%a, %s) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>, tensor<3xi64>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @main(%s: tensor<1xi64>) -> tensor<?xi32> {
  // expected-error@+1 {{dynamic_iota (C1)}}
  %0 = "stablehlo.dynamic_iota"(%s) {iota_dimension = 1 : i64} : (tensor<1xi64>) -> tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @main(%a: tensor<6xf32>, %s: tensor<3xi64>) -> tensor<?x?xf32> {
  // expected-error@+1 {{dynamic_reshape (C4)}}
  %0 = "stablehlo.dynamic_reshape"(%a, %s) : (tensor<6xf32>, tensor<3xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @main(%a: tensor<4xi8>) -> tensor<4xf32> {
  // expected-error@+1 {{uniform_dequantize (I1)}}
  %0 = "stablehlo.uniform_dequantize"(%a) : (tensor<4xi8>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{uniform_quantize (O1)}}
  %0 = "stablehlo.uniform_quantize"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf16>) -> tensor<4x!quant.uniform<i8:f32, 0.5>> {
  // expected-error@+1 {{uniform_quantize (C2)}}
  %0 = "stablehlo.uniform_quantize"(%a) : (tensor<4xf16>) -> tensor<4x!quant.uniform<i8:f32, 0.5>>
  return %0 : tensor<4x!quant.uniform<i8:f32, 0.5>>
}

// -----

func.func @main(%a: tensor<4x!quant.uniform<i8:f32, 0.5>>, %b: tensor<4x!quant.uniform<i16:f32, 0.5>>) -> tensor<4x!quant.uniform<i8:f32, 0.5>> {
  // expected-error@+1 {{add (C2): quantized operand}}
  %0 = "stablehlo.add"(%a, %b) : (tensor<4x!quant.uniform<i8:f32, 0.5>>, tensor<4x!quant.uniform<i16:f32, 0.5>>) -> tensor<4x!quant.uniform<i8:f32, 0.5>>
  return %0 : tensor<4x!quant.uniform<i8:f32, 0.5>>
}

// -----

func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{chlo.broadcast_add (SIG)}}
  %0 = "chlo.broadcast_add"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%p: tensor<i1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{if (C1): true_branch must take no arguments}}
  %0 = "stablehlo.if"(%p) ({
  ^bb0(%x: tensor<2xf32>):
    stablehlo.return %x : tensor<2xf32>
  }, {
    stablehlo.return %a : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> !stablehlo.token {
  // expected-error@+1 {{after_all (I1)}}
  %0 = "stablehlo.after_all"(%a) : (tensor<4xf32>) -> !stablehlo.token
  return %0 : !stablehlo.token
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error@+1 {{collective_permute (C5)}}
  %0 = "stablehlo.collective_permute"(%a) {source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @main(%a: tensor<1x8x8x4xf32>, %k: tensor<3x3x2x16xf32>) -> tensor<1x6x6x16xf32> {
  // expected-error@+1 {{convolution (C23)}}
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 2 : i64, feature_group_count = 2 : i64} : (tensor<1x8x8x4xf32>, tensor<3x3x2x16xf32>) -> tensor<1x6x6x16xf32>
  return %0 : tensor<1x6x6x16xf32>
}

// -----

func.func @main(%a: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x16xf32>) -> tensor<1x6x6x16xf32> {
  // expected-error@+1 {{convolution (C3)}}
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [0, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x6x6x16xf32>
  return %0 : tensor<1x6x6x16xf32>
}

// -----

func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{dot_general (C22)}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 0, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf16>) -> tensor<2x2xf32> {
  // expected-error@+1 {{dot_general (C13)}}
  %0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x2xf32>, tensor<2x2xf16>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @main(%a: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f64>> {
  // expected-error@+1 {{fft (C2)}}
  %0 = "stablehlo.fft"(%a) {fft_type = #stablehlo<fft_type FFT>, fft_length = array<i64: 8>} : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f64>>
  return %0 : tensor<8xcomplex<f64>>
}

// -----

func.func @main(%a: tensor<4x6xf32>, %s: tensor<3x6xf32>, %z: tensor<f32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{select_and_scatter (C9)}}
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    stablehlo.return %x : tensor<f32>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %t = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) {window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 1, 1>} : (tensor<4x6xf32>, tensor<3x6xf32>, tensor<f32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{sort (ATTR): attribute 'is_stable' must be a bool}}
  %0 = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64, is_stable = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{all_to_all (C9): result #0 dimension 0 is 4, expected 2}}
  %0 = "stablehlo.all_to_all"(%a) {split_dimension = 0 : i64, concat_dimension = 1 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{all_reduce (C1): replica_groups contains 1 twice}}
  %0 = "stablehlo.all_reduce"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{collective_permute (C3): target 1 appears twice}}
  %0 = "stablehlo.collective_permute"(%a) {source_target_pairs = dense<[[0, 1], [2, 1]]> : tensor<2x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @main(%a: tensor<4x3xf32>) -> tensor<i64> {
  // expected-error@+1 {{get_dimension_size (O1)}}
  %0 = "stablehlo.get_dimension_size"(%a) {dimension = 1 : i64} : (tensor<4x3xf32>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

func.func @main(%a: tensor<4x3xf32>) -> tensor<i32> {
  // expected-error@+1 {{get_dimension_size (C1)}}
  %0 = "stablehlo.get_dimension_size"(%a) {dimension = 2 : i64} : (tensor<4x3xf32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

func.func @main(%a: tensor<f32>, %b: tensor<f32>, %s: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error@+1 {{rng (C3)}}
  %0 = "stablehlo.rng"(%a, %b, %s) {rng_distribution = #stablehlo<rng_distribution UNIFORM>} : (tensor<f32>, tensor<f32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @main(%a: tensor<8xf32>, %s: tensor<2xi32>) -> tensor<?xf32> {
  // expected-error@+1 {{real_dynamic_slice (C2)}}
  %0 = "stablehlo.real_dynamic_slice"(%a, %s, %s, %s) : (tensor<8xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @main(%a: tensor<3x4xf32>, %i: tensor<2x1xi32>, %s: tensor<3xi32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{dynamic_gather (C11)}}
  %0 = "stablehlo.dynamic_gather"(%a, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>} : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<3xi32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @main(%a: tensor<3x4xf32>, %i: tensor<2x1xi32>, %s: tensor<2xi32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{dynamic_gather (C5)}}
  %0 = "stablehlo.dynamic_gather"(%a, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [3], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>} : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2xi32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @main(%a: tensor<1x8x3xf32>, %k: tensor<3x4x16xf32>, %p: tensor<1x2xi32>) -> tensor<1x?x16xf32> {
  // expected-error@+1 {{dynamic_conv (C14)}}
  %0 = "stablehlo.dynamic_conv"(%a, %k, %p) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64} : (tensor<1x8x3xf32>, tensor<3x4x16xf32>, tensor<1x2xi32>) -> tensor<1x?x16xf32>
  return %0 : tensor<1x?x16xf32>
}

// -----

func.func @main(%a: tensor<1x8x3xf32>, %k: tensor<3x3x16xf32>, %p: tensor<2x2xi32>) -> tensor<1x?x16xf32> {
  // expected-error@+1 {{dynamic_conv (C4)}}
  %0 = "stablehlo.dynamic_conv"(%a, %k, %p) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64} : (tensor<1x8x3xf32>, tensor<3x3x16xf32>, tensor<2x2xi32>) -> tensor<1x?x16xf32>
  return %0 : tensor<1x?x16xf32>
}

// -----

// dot algorithm, unsupported: mixed precision types
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{dot_general (ALG): unsupported dot algorithm <lhs_precision_type = bf16, rhs_precision_type = f16}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = bf16, rhs_precision_type = f16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// dot algorithm, unsupported: bf16 x2
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{num_primitive_operations = 2}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 2, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// dot algorithm, unsupported: component counts other than 1
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{lhs_component_count = 3, rhs_component_count = 3}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 3, rhs_component_count = 3, num_primitive_operations = 6, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// dot algorithm, unsupported: imprecise accumulation outside f8
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{allow_imprecise_accumulation = true>}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = true> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// dot algorithm, unsupported: f8 accumulating in f16
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{dot_general (ALG): unsupported dot algorithm}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = f8E4M3FN, rhs_precision_type = f8E5M2, accumulation_type = f16, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// dot algorithm, unsupported: tf32 accumulation
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{accumulation_type = tf32}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = tf32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// dot algorithm, bad type: integer precision type
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{lhs_precision_type must be a floating-point type or tf32, got 'i8'}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = i8, rhs_precision_type = i8, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// dot algorithm, bad type: an integer accumulation type (an unknown name such
// as f33 is not a type at all: a parse error, tests/unit/test_parse_strict.c)
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{accumulation_type must be a floating-point type or tf32, got 'i32'}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = i32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// dot algorithm, component count zero
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{dot_general (C23)}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 0, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// dot algorithm, num_primitive_operations zero
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{dot_general (C24)}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 0, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// dot algorithm, complex operands
func.func @main(%a: tensor<2x2xcomplex<f32>>, %b: tensor<2x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>> {
  // expected-error@+1 {{dot algorithm F32_F32_F32 on complex}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = f32, rhs_precision_type = f32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xcomplex<f32>>, tensor<2x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
  return %0 : tensor<2x2xcomplex<f32>>
}

// -----

// dot algorithm given in part
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{dot algorithm is missing 'num_primitive_operations'}}
  %0 = "stablehlo.dot_general"(%a, %b) {algorithm = #stablehlo.dot_algorithm<lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, allow_imprecise_accumulation = false>, dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// dot algorithm with precision_config HIGHEST
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{dot_general (C21)}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// ANY_F8 lets lhs and rhs be different f8 types, but not f8 and f16
func.func @main(%a: tensor<2x2xf8E4M3FN>, %b: tensor<2x2xf16>) -> tensor<2x2xf32> {
  // expected-error@+1 {{dot_general (ALG): unsupported dot algorithm}}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = f8E4M3FN, rhs_precision_type = f16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xf8E4M3FN>, tensor<2x2xf16>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// expected-error@+1 {{tf.aliasing_output = 5 names no result}}
func.func @main(%a: tensor<4xf32> {tf.aliasing_output = 5 : i32}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error@+1 {{arguments #0 and #1 are both aliased to result #0}}
func.func @main(%a: tensor<4xf32> {tf.aliasing_output = 0 : i32}, %b: tensor<4xf32> {tf.aliasing_output = 0 : i32}) -> tensor<4xf32> {
  %c = stablehlo.add %a, %b : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// expected-error@+1 {{argument #0 is aliased to result #0 (tf.aliasing_output) but their types differ}}
func.func @main(%a: tensor<4xf32> {tf.aliasing_output = 0 : i32}) -> tensor<4xi32> {
  %c = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xi32>
  return %c : tensor<4xi32>
}
