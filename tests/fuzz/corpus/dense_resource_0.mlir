module @f64_two_blobs {
  func.func public @main(%arg0: tensor<2x2xf64>) -> (tensor<2x2xf64>, tensor<2x2xf64>) {
    %cst = stablehlo.constant dense_resource<a> : tensor<2x2xf64>
    %cst_0 = stablehlo.constant dense_resource<b> : tensor<2x2xf64>
    %0 = stablehlo.multiply %arg0, %cst : tensor<2x2xf64>
    %1 = stablehlo.add %0, %cst_0 : tensor<2x2xf64>
    %2 = stablehlo.subtract %1, %cst : tensor<2x2xf64>
    return %1, %2 : tensor<2x2xf64>, tensor<2x2xf64>
  }
}

{-#
  dialect_resources: {
    builtin: {
      a: "0x0800000083231ABCA99902C07E259D805D01CCBF7EE2425140EFF3BFF7268CF2BB6EE7BF",
      b: "0x08000000D4A47DD0916AE1BF28D0D402433ED4BFF8C1F09A2758DA3F9362B67F22AEF03F"
    }
  }
#-}
