module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xf32>) -> (tensor<3x4xf32> {jax.result_info = "result[0]"}, tensor<3xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.slice %arg0 [0:3, 0:4] : (tensor<4x4xf32>) -> tensor<3x4xf32>
    %1:3 = call @svd(%0) : (tensor<3x4xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<3x4xf32>)
    %2 = stablehlo.broadcast_in_dim %1#1, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<3x3xf32>
    %4 = stablehlo.multiply %1#0, %3 : tensor<3x3xf32>
    %5 = stablehlo.dot_general %4, %1#2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<3x3xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    return %5, %1#1 : tensor<3x4xf32>, tensor<3xf32>
  }
  func.func private @svd(%arg0: tensor<3x4xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<3x4xf32>) {
    %0:5 = stablehlo.custom_call @hipsolver_gesvdj_ffi(%arg0) {backend_config = "", mhlo.backend_config = {compute_uv = true, full_matrices = true}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m], [n, o], [p, q], []) {i=3, j=4, k=3, l=4, m=3, n=3, o=3, p=4, q=4}, custom>} : (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<4x4xf32>, tensor<i32>)
    %1 = stablehlo.transpose %0#3, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = stablehlo.slice %0#2 [0:3, 0:3] : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %3 = stablehlo.slice %1 [0:3, 0:4] : (tensor<4x4xf32>) -> tensor<3x4xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %5 = stablehlo.compare EQ, %0#4, %4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %6 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<i1>) -> tensor<1xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %8 = stablehlo.broadcast_in_dim %6, dims = [0] : (tensor<1xi1>) -> tensor<3xi1>
    %9 = stablehlo.select %8, %0#1, %7 : tensor<3xi1>, tensor<3xf32>
    %10 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst_0 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3x3xf32>
    %12 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %13 = stablehlo.select %12, %2, %11 : tensor<3x3xi1>, tensor<3x3xf32>
    %14 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %16 = stablehlo.broadcast_in_dim %14, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<3x4xi1>
    %17 = stablehlo.select %16, %3, %15 : tensor<3x4xi1>, tensor<3x4xf32>
    return %13, %9, %17 : tensor<3x3xf32>, tensor<3xf32>, tensor<3x4xf32>
  }
}
