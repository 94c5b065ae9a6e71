// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @convert_op_test_i1_to_i1() {
  %operand = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %result = stablehlo.convert %operand : (tensor<2xi1>) -> tensor<2xi1>
  check.expect_eq_const %result, dense<[true, false]> : tensor<2xi1>
  func.return
}
