// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @abs_op_test_si64() {
  %operand = stablehlo.constant dense<[-2, 0, 2]> : tensor<3xi64>
  %result = stablehlo.abs %operand : tensor<3xi64>
  check.expect_eq_const %result, dense<[2, 0, 2]> : tensor<3xi64>
  func.return
}
