// Hand-made: a @main that takes and returns !stablehlo.token with no host
// callback (after_all, a function that only passes the token through), as
// JAX's ordered effects shape @main. hlo run makes the token; no input file.
module @tokens {
  func.func public @main(%arg0: !stablehlo.token, %arg1: tensor<3xf32>) -> (!stablehlo.token, tensor<3xf32>) {
    %0 = call @pass(%arg0) : (!stablehlo.token) -> !stablehlo.token
    %1 = stablehlo.after_all %0, %arg0 : !stablehlo.token
    %2 = stablehlo.add %arg1, %arg1 : tensor<3xf32>
    return %1, %2 : !stablehlo.token, tensor<3xf32>
  }
  func.func private @pass(%arg0: !stablehlo.token) -> !stablehlo.token {
    return %arg0 : !stablehlo.token
  }
}
