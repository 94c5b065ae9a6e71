module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xf64>) -> (tensor<2xf64> {jax.result_info = "result[0]"}, tensor<2xi64> {jax.result_info = "result[1]"}) {
    %0 = call @norm(%arg0) : (tensor<2x4x4xf64>) -> tensor<2xf64>
    %1 = call @matrix_rank(%arg0) : (tensor<2x4x4xf64>) -> tensor<2xi64>
    return %0, %1 : tensor<2xf64>, tensor<2xi64>
  }
  func.func private @norm(%arg0: tensor<2x4x4xf64>) -> tensor<2xf64> {
    %0 = call @svd(%arg0) : (tensor<2x4x4xf64>) -> tensor<2x4xf64>
    %cst = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<2x4xf64>, tensor<f64>) -> tensor<2xf64>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f64>) -> tensor<2xf64>
    %3 = stablehlo.maximum %2, %1 : tensor<2xf64>
    return %3 : tensor<2xf64>
  }
  func.func private @svd(%arg0: tensor<2x4x4xf64>) -> tensor<2x4xf64> {
    %0:5 = stablehlo.custom_call @cusolver_gesvdj_ffi(%arg0) {backend_config = "", mhlo.backend_config = {compute_uv = false, full_matrices = true}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n], [i, o, p], [i, q, r], [i]) {i=2, j=4, k=4, l=4, m=4, n=4, o=4, p=4, q=4, r=4}, custom>} : (tensor<2x4x4xf64>) -> (tensor<2x4x4xf64>, tensor<2x4xf64>, tensor<2x4x4xf64>, tensor<2x4x4xf64>, tensor<2xi32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %2 = stablehlo.compare EQ, %0#4, %1, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<2xi1>) -> tensor<2x1xi1>
    %cst = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<2x4xf64>
    %5 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<2x1xi1>) -> tensor<2x4xi1>
    %6 = stablehlo.select %5, %0#1, %4 : tensor<2x4xi1>, tensor<2x4xf64>
    return %6 : tensor<2x4xf64>
  }
  func.func private @matrix_rank(%arg0: tensor<2x4x4xf64>) -> tensor<2xi64> {
    %0 = call @svd_0(%arg0) : (tensor<2x4x4xf64>) -> tensor<2x4xf64>
    %cst = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<2x4xf64>, tensor<f64>) -> tensor<2xf64>
    %cst_0 = stablehlo.constant dense<4.000000e+00> : tensor<f64>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f64>) -> tensor<2xf64>
    %3 = stablehlo.multiply %1, %2 : tensor<2xf64>
    %cst_1 = stablehlo.constant dense<2.2204460492503131E-16> : tensor<f64>
    %4 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f64>) -> tensor<2xf64>
    %5 = stablehlo.multiply %3, %4 : tensor<2xf64>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0] : (tensor<2xf64>) -> tensor<2x1xf64>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<2x1xf64>) -> tensor<2x4xf64>
    %8 = stablehlo.compare GT, %0, %7, FLOAT : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xi1>
    %9 = stablehlo.convert %8 : (tensor<2x4xi1>) -> tensor<2x4xi32>
    %10 = stablehlo.convert %9 : (tensor<2x4xi32>) -> tensor<2x4xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %11 = stablehlo.reduce(%10 init: %c) applies stablehlo.add across dimensions = [1] : (tensor<2x4xi64>, tensor<i64>) -> tensor<2xi64>
    return %11 : tensor<2xi64>
  }
  func.func private @svd_0(%arg0: tensor<2x4x4xf64>) -> tensor<2x4xf64> {
    %0:5 = stablehlo.custom_call @cusolver_gesvdj_ffi(%arg0) {backend_config = "", mhlo.backend_config = {compute_uv = false, full_matrices = true}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n], [i, o, p], [i, q, r], [i]) {i=2, j=4, k=4, l=4, m=4, n=4, o=4, p=4, q=4, r=4}, custom>} : (tensor<2x4x4xf64>) -> (tensor<2x4x4xf64>, tensor<2x4xf64>, tensor<2x4x4xf64>, tensor<2x4x4xf64>, tensor<2xi32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %2 = stablehlo.compare EQ, %0#4, %1, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<2xi1>) -> tensor<2x1xi1>
    %cst = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<2x4xf64>
    %5 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<2x1xi1>) -> tensor<2x4xi1>
    %6 = stablehlo.select %5, %0#1, %4 : tensor<2x4xi1>, tensor<2x4xf64>
    return %6 : tensor<2x4xf64>
  }
}
