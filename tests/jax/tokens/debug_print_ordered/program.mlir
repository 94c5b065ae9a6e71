module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: !stablehlo.token {jax.token = true}, %arg1: tensor<3xf32>) -> (!stablehlo.token {jax.token = true}, tensor<3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0, %arg1) {backend_config = "", has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, operand_layouts = [dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<> : tensor<0xindex>]} : (!stablehlo.token, tensor<3xf32>) -> !stablehlo.token
    %1 = stablehlo.sine %arg1 : tensor<3xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %3 = stablehlo.multiply %1, %2 : tensor<3xf32>
    return %0, %3 : !stablehlo.token, tensor<3xf32>
  }
}
