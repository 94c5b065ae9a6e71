// shift_right_arithmetic on unsigned ints shifts logically; spec/XLA shift the bit pattern arithmetically (sign-bit fill): ui32 0xB4BEB612 >> 17: hlo 0x00005A5F, XLA 0xFFFFDA5F
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<ui32>) -> (tensor<ui32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<17> : tensor<ui32>
    %0 = stablehlo.shift_right_arithmetic %arg0, %c : tensor<ui32>
    return %0 : tensor<ui32>
  }
}
