module @f32_add {
  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %cst = stablehlo.constant dense_resource<c> : tensor<3xf32>
    %0 = stablehlo.add %arg0, %cst : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      c: "0x040000006CBF003E7F4607BEBDF2233F"
    }
  }
#-}
