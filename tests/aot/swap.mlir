// A while loop whose body hands carried values on to other slots (result 1
// is argument 2, result 2 reads argument 1 and 2: a Fibonacci step on
// vectors), a reshape of a carried value, and a case: the loop buffers'
// staging copies of --emit=lib. Expected: tests/suite_aot.sh computes them.
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %k: tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %x = %a, %y = %b) : tensor<i32>, tensor<4xf32>, tensor<4xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %k : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %s = stablehlo.add %x, %y : tensor<4xf32>
      stablehlo.return %i1, %y, %s : tensor<i32>, tensor<4xf32>, tensor<4xf32>
    }
  %two = stablehlo.constant dense<2> : tensor<i32>
  %p = stablehlo.remainder %r#0, %two : tensor<i32>
  %z = "stablehlo.case"(%p) ({
    stablehlo.return %r#1 : tensor<4xf32>
  }, {
    %n = stablehlo.negate %r#1 : tensor<4xf32>
    stablehlo.return %n : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  %m = stablehlo.reshape %r#2 : (tensor<4xf32>) -> tensor<2x2xf32>
  return %z, %r#2, %m : tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>
}
