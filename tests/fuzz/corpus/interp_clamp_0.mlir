// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @clamp_op_test_si64() {
  %min = stablehlo.constant dense<[1, 5, -5]> : tensor<3xi64>
  %operand = stablehlo.constant dense<[2, 3, -1]> : tensor<3xi64>
  %max = stablehlo.constant dense<[3, 7, -3]> : tensor<3xi64>
  %result = stablehlo.clamp %min, %operand, %max : (tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  check.expect_eq_const %result, dense<[2, 5, -3]> : tensor<3xi64>
  func.return
}
