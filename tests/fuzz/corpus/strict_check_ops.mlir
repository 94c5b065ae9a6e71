func.func @main() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = interpreter.probe %0, probe_id = "p" : tensor<2xi32>
  check.expect_eq_const %1, dense<[1, 2]> : tensor<2xi32> {a = 1 : i32}
  check.expect_serialized_eq %1, probe_id = "p", iter = 0 : tensor<2xi32>
  func.return
}
