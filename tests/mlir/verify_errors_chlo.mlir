// Negative cases for the verifier's chlo checks (src/ir/verify_chlo.c) and
// for the later additions to the stablehlo checks (fft C4, element counts
// that overflow int64, abs of complex): each piece breaks one constraint;
// the comment names the expected message (a substring) and the line it must
// point at (tests/unit/test_verify.c).

func.func public @main(%a: tensor<4xf32>) -> tensor<5xf16> {
  // expected-error@+1 {{chlo.erf_inv (C1): result shape of tensor<5xf16> differs}}
  %0 = chlo.erf_inv %a : tensor<4xf32> -> tensor<5xf16>
  return %0 : tensor<5xf16>
}

// -----

func.func public @main(%a: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error@+1 {{chlo.erf_inv (C2): result element type of tensor<4xf16> differs from operand tensor<4xf32>}}
  %0 = chlo.erf_inv %a : tensor<4xf32> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func public @main(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error@+1 {{chlo.erf_inv (I1): operand must be a tensor of floating-point type}}
  %0 = chlo.erf_inv %a : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func public @main(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{chlo.lgamma (I1): operand must be a tensor of floating-point type, got tensor<4xi32>}}
  %0 = chlo.lgamma %a : tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func public @main(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error@+1 {{chlo.erf (I1): operand must be a tensor of f16, bf16, f32 or f64 type}}
  %0 = chlo.erf %a : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func public @main(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{chlo.acos (I1): operand must be a tensor of floating-point or complex type}}
  %0 = chlo.acos %a : tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func public @main(%a: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{chlo.square (C1)}}
  %0 = chlo.square %a : tensor<4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func public @main(%a: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error@+1 {{chlo.square (I1): operand must be a tensor of integer, floating-point or complex type}}
  %0 = chlo.square %a : tensor<4xi1> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{chlo.is_inf (C2): result element type must be i1}}
  %0 = chlo.is_inf %a : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func public @main(%a: tensor<6x20xf32>) -> tensor<6x30xf32> {
  // expected-error@+1 {{chlo.top_k (C2): k = 30 exceeds the operand's last dimension 20}}
  %v, %i = chlo.top_k(%a, k = 30) : tensor<6x20xf32> -> (tensor<6x30xf32>, tensor<6x30xi32>)
  return %v : tensor<6x30xf32>
}

// -----

func.func public @main(%a: tensor<6x20xf32>) -> tensor<6x0xf32> {
  // expected-error@+1 {{chlo.top_k (C2): k must be >= 0}}
  %v, %i = chlo.top_k(%a, k = -1) : tensor<6x20xf32> -> (tensor<6x0xf32>, tensor<6x0xi32>)
  return %v : tensor<6x0xf32>
}

// -----

func.func public @main(%a: tensor<6x20xf32>) -> tensor<6x3xf32> {
  // expected-error@+1 {{chlo.top_k (C3): values must have the operand's type with last dimension k = 4}}
  %v, %i = chlo.top_k(%a, k = 4) : tensor<6x20xf32> -> (tensor<6x3xf32>, tensor<6x4xi32>)
  return %v : tensor<6x3xf32>
}

// -----

func.func public @main(%a: tensor<6x20xf32>) -> tensor<6x4xi64> {
  // expected-error@+1 {{chlo.top_k (C4): indices must have the shape of values and element type i32}}
  %v, %i = chlo.top_k(%a, k = 4) : tensor<6x20xf32> -> (tensor<6x4xf32>, tensor<6x4xi64>)
  return %i : tensor<6x4xi64>
}

// -----

func.func public @main(%a: tensor<6x20xcomplex<f32>>) -> tensor<6x4xcomplex<f32>> {
  // expected-error@+1 {{chlo.top_k (C1): operand must not be complex}}
  %v, %i = chlo.top_k(%a, k = 4) : tensor<6x20xcomplex<f32>> -> (tensor<6x4xcomplex<f32>>, tensor<6x4xi32>)
  return %v : tensor<6x4xcomplex<f32>>
}

// -----

func.func public @main(%arg0: tensor<6x20xf32>) -> tensor<6x20xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<6xf32>
  // expected-error@+1 {{chlo.scan (C2): dimension 2 is out of range for input #0 of rank 2}}
  %1:2 = chlo.scan(%arg0) inits (%cst) dimension=2 {
  ^bb0(%input: tensor<6xf32>, %carry: tensor<6xf32>):
    %2 = stablehlo.add %input, %carry : tensor<6xf32>
    stablehlo.return %2, %2 : tensor<6xf32>, tensor<6xf32>
  } : (tensor<6x20xf32>, tensor<6xf32>) -> (tensor<6x20xf32>, tensor<6xf32>)
  return %1#0 : tensor<6x20xf32>
}

// -----

func.func public @main(%arg0: tensor<6x20xf32>) -> tensor<6x20xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<6xf32>
  // expected-error@+1 {{chlo.scan (C3): body argument #0 has type tensor<20xf32>}}
  %1:2 = chlo.scan(%arg0) inits (%cst) dimension=1 {
  ^bb0(%input: tensor<20xf32>, %carry: tensor<6xf32>):
    stablehlo.return %carry, %carry : tensor<6xf32>, tensor<6xf32>
  } : (tensor<6x20xf32>, tensor<6xf32>) -> (tensor<6x20xf32>, tensor<6xf32>)
  return %1#0 : tensor<6x20xf32>
}

// -----

func.func public @main(%arg0: tensor<6x20xf32>) -> tensor<6x20xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<6xf32>
  // expected-error@+1 {{chlo.scan (C4): result #1 has type tensor<6xf16>, init #0 has tensor<6xf32>}}
  %1:2 = chlo.scan(%arg0) inits (%cst) dimension=1 {
  ^bb0(%input: tensor<6xf32>, %carry: tensor<6xf32>):
    %2 = stablehlo.add %input, %carry : tensor<6xf32>
    stablehlo.return %2, %2 : tensor<6xf32>, tensor<6xf32>
  } : (tensor<6x20xf32>, tensor<6xf32>) -> (tensor<6x20xf32>, tensor<6xf16>)
  return %1#0 : tensor<6x20xf32>
}

// -----

func.func public @main(%arg0: tensor<6x20xf32>) -> tensor<6x20xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<6xf32>
  // expected-error@+1 {{chlo.scan (C2): output #0 has size 19 along dimension 1, expected 20}}
  %1:2 = chlo.scan(%arg0) inits (%cst) dimension=1 {
  ^bb0(%input: tensor<6xf32>, %carry: tensor<6xf32>):
    %2 = stablehlo.add %input, %carry : tensor<6xf32>
    stablehlo.return %2, %2 : tensor<6xf32>, tensor<6xf32>
  } : (tensor<6x20xf32>, tensor<6xf32>) -> (tensor<6x19xf32>, tensor<6xf32>)
  return %arg0 : tensor<6x20xf32>
}

// -----

func.func public @main(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{chlo.broadcast_add (C4): operand dimension sizes 3 and 4 cannot be broadcast together}}
  %0 = chlo.broadcast_add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func public @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3x3xf32> {
  // expected-error@+1 {{chlo.broadcast_add (C4): result dimension 0 has size 3, broadcasting gives 2}}
  %0 = chlo.broadcast_add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func public @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{chlo.broadcast_multiply (C3): operand #0 has rank 2, above the result's 1}}
  %0 = chlo.broadcast_multiply %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func public @main(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{chlo.broadcast_subtract (C3): broadcast_dimensions entry 2 is out of range}}
  %0 = chlo.broadcast_subtract %a, %b {broadcast_dimensions = array<i64: 2>} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func public @main(%a: tensor<2x3xf32>, %b: tensor<3xi32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{chlo.broadcast_add (C1): lhs/rhs element types differ}}
  %0 = chlo.broadcast_add %a, %b : (tensor<2x3xf32>, tensor<3xi32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func public @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{chlo.broadcast_compare (C2): result element type must be i1}}
  %0 = chlo.broadcast_compare %a, %b {comparison_direction = #chlo<comparison_direction LT>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func public @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{chlo.broadcast_and (I1): lhs must be a tensor of boolean or integer type}}
  %0 = chlo.broadcast_and %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func public @main(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{chlo.next_after (I1): lhs must be a tensor of floating-point type}}
  %0 = chlo.next_after %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func public @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{chlo.mulhi (I1): lhs must be a tensor of integer type}}
  %0 = "chlo.mulhi"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func public @main(%a: tensor<4xi32>, %b: tensor<3xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{chlo.mulhi (C1): shapes of operands}}
  %0 = "chlo.mulhi"(%a, %b) : (tensor<4xi32>, tensor<3xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func public @main(%a: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {
  // expected-error@+1 {{fft (C4): the last 1 dimension(s) of the operand (8) must equal fft_length [4]}}
  %0 = stablehlo.fft %a, type = FFT, length = [4] : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
  return %0 : tensor<8xcomplex<f32>>
}

// -----

func.func public @main(%a: tensor<3x8xcomplex<f32>>) -> tensor<3x8xcomplex<f32>> {
  // expected-error@+1 {{fft (C4): the last 2 dimension(s) of the operand (3, 8) must equal fft_length [4, 8]}}
  %0 = stablehlo.fft %a, type = IFFT, length = [4, 8] : (tensor<3x8xcomplex<f32>>) -> tensor<3x8xcomplex<f32>>
  return %0 : tensor<3x8xcomplex<f32>>
}

// -----

func.func public @main(%a: tensor<4x5xcomplex<f32>>) -> tensor<4x8xf32> {
  // expected-error@+1 {{fft (C4): the last 2 dimension(s) of the result (4, 8) must equal fft_length [4, 9]}}
  %0 = stablehlo.fft %a, type = IRFFT, length = [4, 9] : (tensor<4x5xcomplex<f32>>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func public @main(%a: tensor<1xf32>) -> tensor<4294967296x4294967296xf32> {
  // expected-error@+1 {{reshape (TYPE): result #0 has type tensor<4294967296x4294967296xf32>, whose element count overflows int64}}
  %0 = stablehlo.reshape %a : (tensor<1xf32>) -> tensor<4294967296x4294967296xf32>
  return %0 : tensor<4294967296x4294967296xf32>
}

// -----

// expected-error@+1 {{func (TYPE): argument #0 of @main has type tensor<4294967296x?x4294967296xf32>, whose element count overflows int64}}
func.func public @main(%a: tensor<4294967296x?x4294967296xf32>) -> tensor<1xf32> {
  %0 = stablehlo.constant dense<1.0> : tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func public @main(%a: tensor<4xf32>) -> tensor<f32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %init) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    reducer(%x: tensor<4294967296x4294967296xf32>, %y: tensor<f32>) {
      // expected-error@-1 {{block argument #0 has type tensor<4294967296x4294967296xf32>, whose element count overflows int64}}
      %s = stablehlo.add %y, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }
  return %0 : tensor<f32>
}

// -----

func.func public @main(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error@+1 {{abs (C2): result element type must be f32 (abs of complex<f32>), got tensor<4xcomplex<f32>>}}
  %0 = stablehlo.abs %a : tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}
