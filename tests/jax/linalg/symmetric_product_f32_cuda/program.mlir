module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xf32>) -> (tensor<2x4x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:2, 0:4, 0:3] : (tensor<2x4x4xf32>) -> tensor<2x4x3xf32>
    %1 = stablehlo.transpose %arg0, dims = [0, 2, 1] : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %2 = stablehlo.add %arg0, %1 : tensor<2x4x4xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<f32>
    %5 = stablehlo.custom_call @cusolver_syrk_ffi(%0, %2, %3, %4) {backend_config = "", mhlo.backend_config = {transpose = false}, operand_layouts = [dense<[2, 1, 0]> : tensor<3xindex>, dense<[2, 1, 0]> : tensor<3xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[2, 1, 0]> : tensor<3xindex>]} : (tensor<2x4x3xf32>, tensor<2x4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<2x4x4xf32>
    %6 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %c = stablehlo.constant dense<-1> : tensor<i64>
    %7 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %8 = stablehlo.add %6, %7 : tensor<4x4xi64>
    %9 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %10 = stablehlo.compare GE, %8, %9, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %11 = stablehlo.broadcast_in_dim %10, dims = [1, 2] : (tensor<4x4xi1>) -> tensor<2x4x4xi1>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2x4x4xf32>
    %13 = stablehlo.select %11, %5, %12 : tensor<2x4x4xi1>, tensor<2x4x4xf32>
    %14 = stablehlo.transpose %13, dims = [0, 2, 1] : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %15 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %c_2 = stablehlo.constant dense<0> : tensor<i64>
    %16 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %17 = stablehlo.add %15, %16 : tensor<4x4xi64>
    %18 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %19 = stablehlo.compare GE, %17, %18, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %20 = stablehlo.broadcast_in_dim %19, dims = [1, 2] : (tensor<4x4xi1>) -> tensor<2x4x4xi1>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x4x4xf32>
    %22 = stablehlo.select %20, %5, %21 : tensor<2x4x4xi1>, tensor<2x4x4xf32>
    %23 = stablehlo.add %22, %14 : tensor<2x4x4xf32>
    return %23 : tensor<2x4x4xf32>
  }
}
