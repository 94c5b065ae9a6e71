module @i32_matrix {
  func.func public @main(%arg0: tensor<2x3xi32>) -> tensor<2x3xi32> {
    %c = stablehlo.constant dense_resource<w> : tensor<2x3xi32>
    %0 = stablehlo.multiply %arg0, %c : tensor<2x3xi32>
    return %0 : tensor<2x3xi32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x0400000000000000150000005E0000002D0000001A00000008000000"
    }
  }
#-}
