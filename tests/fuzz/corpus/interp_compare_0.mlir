// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @compare_op_test_si64_default() {
  %lhs = stablehlo.constant dense<-2> : tensor<i64>
  %rhs = stablehlo.constant dense<-2> : tensor<i64>
  %result = stablehlo.compare EQ, %lhs, %rhs : (tensor<i64>, tensor<i64>) -> tensor<i1>
  check.expect_eq_const %result, dense<true> : tensor<i1>
  func.return
}
