// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @divide_op_test_si64() {
  %lhs = stablehlo.constant dense<[17, -17, 17, -17]> : tensor<4xi64>
  %rhs = stablehlo.constant dense<[3, 3, -3, -3]> : tensor<4xi64>
  %result = stablehlo.divide %lhs, %rhs : tensor<4xi64>
  check.expect_eq_const %result, dense<[5, -5, -5, 5]> : tensor<4xi64>
  func.return
}
