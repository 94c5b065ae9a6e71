// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @ceil_op_test_bf16() {
  %0 = stablehlo.constant dense<[0xFF80, -2.5, 0x8001, -0.0, 0.0, 0x0001, 2.5, 0x7F80, 0x7FC0]> : tensor<9xbf16>
  %1 = stablehlo.ceil %0 : tensor<9xbf16>
  check.expect_almost_eq_const %1, dense<[0xFF80, -2.000000e+00, -0.000000e+00, -0.000000e+00, 0.000000e+00, 1.000000e+00, 3.000000e+00, 0x7F80, 0x7FC0]> : tensor<9xbf16>
  func.return
}
