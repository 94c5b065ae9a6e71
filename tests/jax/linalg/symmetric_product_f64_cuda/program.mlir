module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xf64>) -> (tensor<4x4xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:4, 0:3] : (tensor<4x4xf64>) -> tensor<4x3xf64>
    %1 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x4xf64>) -> tensor<4x4xf64>
    %2 = stablehlo.add %arg0, %1 : tensor<4x4xf64>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f64>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<f64>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<f64>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f64>) -> tensor<f64>
    %5 = stablehlo.custom_call @cusolver_syrk_ffi(%0, %2, %3, %4) {backend_config = "", mhlo.backend_config = {transpose = false}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<4x3xf64>, tensor<4x4xf64>, tensor<f64>, tensor<f64>) -> tensor<4x4xf64>
    %6 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %c = stablehlo.constant dense<-1> : tensor<i64>
    %7 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %8 = stablehlo.add %6, %7 : tensor<4x4xi64>
    %9 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %10 = stablehlo.compare GE, %8, %9, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %11 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %12 = stablehlo.select %10, %5, %11 : tensor<4x4xi1>, tensor<4x4xf64>
    %13 = stablehlo.transpose %12, dims = [1, 0] : (tensor<4x4xf64>) -> tensor<4x4xf64>
    %14 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %c_2 = stablehlo.constant dense<0> : tensor<i64>
    %15 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %16 = stablehlo.add %14, %15 : tensor<4x4xi64>
    %17 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %18 = stablehlo.compare GE, %16, %17, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %19 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %20 = stablehlo.select %18, %5, %19 : tensor<4x4xi1>, tensor<4x4xf64>
    %21 = stablehlo.add %20, %13 : tensor<4x4xf64>
    return %21 : tensor<4x4xf64>
  }
}
