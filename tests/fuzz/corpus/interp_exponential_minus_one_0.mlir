// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @exponential_minus_one_op_test_f64() {
  %operand = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf64>
  %result = stablehlo.exponential_minus_one %operand : tensor<2xf64>
  check.expect_almost_eq_const %result, dense<[0.0, 1.7182818284590451]> : tensor<2xf64>
  func.return
}
