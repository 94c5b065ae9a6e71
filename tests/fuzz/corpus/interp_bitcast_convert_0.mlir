// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @bitcast_convert_op_test_i1_to_i64() {
  %operand = stablehlo.constant dense<[true, true, true, true,
                                       false, true, true, true,
                                       true, false, true, true,
                                       false, false, true, true,
                                       true, true, false, true,
                                       false, true, false, true,
                                       true, false, false, true,
                                       false, false, false, true,
                                       true, true, true, false,
                                       false, true, true, false,
                                       true, false, true, false,
                                       false, false, true, false,
                                       true, true, false, false,
                                       false, true, false, false,
                                       true, false, false, false,
                                       false, false, false, false]> : tensor<64xi1>
  %result = stablehlo.bitcast_convert %operand : (tensor<64xi1>) -> tensor<i64>
  check.expect_eq_const %result, dense<0x0123456789ABCDEF> : tensor<i64>
  func.return
}
