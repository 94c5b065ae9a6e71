// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @and_op_test_si4() {
  %0 = stablehlo.constant dense<[7, -8, -8]> : tensor<3xi4>
  %1 = stablehlo.constant dense<[0, 7, -8]> : tensor<3xi4>
  %2 = stablehlo.and %0, %1 : tensor<3xi4>
  check.expect_eq_const %2, dense<[0, 0, -8]> : tensor<3xi4>
  func.return
}
