// An op the CPU backend runs on the interpreter (a sort with a comparator
// it does not recognise): --emit=lib must refuse it, naming the op and line.
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "stablehlo.sort"(%arg0) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.multiply %a, %b : tensor<f32>
    %2 = stablehlo.compare GT, %1, %a : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
