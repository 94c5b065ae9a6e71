// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @check_eq() {
  %operand = stablehlo.constant dense<[-2, 0, 2]> : tensor<3xi64>
  %result = stablehlo.constant dense<[-2, 0, 2]> : tensor<3xi64>
  check.expect_eq %operand, %result : tensor<3xi64>
  func.return
}
