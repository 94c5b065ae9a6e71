// out0 u32: 1/1 differ; at (): hlo 23135, xla 4294957663 (binary:u32:shra)
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<ui32>) -> (tensor<ui32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<17> : tensor<ui32>
    %0 = stablehlo.shift_right_arithmetic %arg0, %c : tensor<ui32>
    return %0 : tensor<ui32>
  }
}
