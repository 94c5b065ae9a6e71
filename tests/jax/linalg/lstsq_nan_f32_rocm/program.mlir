module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xf32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<1xf32> {jax.result_info = "result[1]"}, tensor<i64> {jax.result_info = "result[2]"}, tensor<3xf32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.slice %arg0 [0:4, 0:3] : (tensor<4x4xf32>) -> tensor<4x3xf32>
    %1 = stablehlo.slice %arg0 [0:4, 3:4] : (tensor<4x4xf32>) -> tensor<4x1xf32>
    %2 = stablehlo.reshape %1 : (tensor<4x1xf32>) -> tensor<4xf32>
    %3:4 = call @_lstsq(%0, %2) : (tensor<4x3xf32>, tensor<4xf32>) -> (tensor<3xf32>, tensor<1xf32>, tensor<i64>, tensor<3xf32>)
    return %3#0, %3#1, %3#2, %3#3 : tensor<3xf32>, tensor<1xf32>, tensor<i64>, tensor<3xf32>
  }
  func.func private @_lstsq(%arg0: tensor<4x3xf32>, %arg1: tensor<4xf32>) -> (tensor<3xf32>, tensor<1xf32>, tensor<i64>, tensor<3xf32>) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %1:3 = call @svd(%arg0) : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>)
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %3 = stablehlo.compare GT, %1#1, %2, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %4 = stablehlo.slice %1#1 [0:1] : (tensor<3xf32>) -> tensor<1xf32>
    %5 = stablehlo.reshape %4 : (tensor<1xf32>) -> tensor<f32>
    %cst_0 = stablehlo.constant dense<4.76837158E-7> : tensor<f32>
    %6 = stablehlo.multiply %cst_0, %5 : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %8 = stablehlo.compare GE, %1#1, %7, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %9 = stablehlo.and %3, %8 : tensor<3xi1>
    %10 = stablehlo.convert %9 : (tensor<3xi1>) -> tensor<3xi32>
    %11 = stablehlo.convert %10 : (tensor<3xi32>) -> tensor<3xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %12 = stablehlo.reduce(%11 init: %c) applies stablehlo.add across dimensions = [0] : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
    %c_1 = stablehlo.constant dense<1> : tensor<i64>
    %13 = call @_where(%9, %1#1, %c_1) : (tensor<3xi1>, tensor<3xf32>, tensor<i64>) -> tensor<3xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %15 = stablehlo.divide %14, %13 : tensor<3xf32>
    %c_3 = stablehlo.constant dense<0> : tensor<i64>
    %16 = call @_where(%9, %15, %c_3) : (tensor<3xi1>, tensor<3xf32>, tensor<i64>) -> tensor<3xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0] : (tensor<3xf32>) -> tensor<3x1xf32>
    %18 = stablehlo.transpose %1#0, dims = [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>
    %19 = stablehlo.dot_general %18, %0, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<3x4xf32>, tensor<4x1xf32>) -> tensor<3x1xf32>
    %20 = stablehlo.transpose %1#2, dims = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %21 = stablehlo.multiply %17, %19 : tensor<3x1xf32>
    %22 = stablehlo.dot_general %20, %21, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<3x3xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
    %23 = stablehlo.dot_general %arg0, %22, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x3xf32>, tensor<3x1xf32>) -> tensor<4x1xf32>
    %24 = stablehlo.subtract %0, %23 : tensor<4x1xf32>
    %25 = call @norm(%24) : (tensor<4x1xf32>) -> tensor<1xf32>
    %26 = stablehlo.multiply %25, %25 : tensor<1xf32>
    %27 = stablehlo.reshape %22 : (tensor<3x1xf32>) -> tensor<3xf32>
    return %27, %26, %12, %1#1 : tensor<3xf32>, tensor<1xf32>, tensor<i64>, tensor<3xf32>
  }
  func.func private @svd(%arg0: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>) {
    %0:5 = stablehlo.custom_call @hipsolver_gesvdj_ffi(%arg0) {backend_config = "", mhlo.backend_config = {compute_uv = true, full_matrices = true}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m], [n, o], [p, q], []) {i=4, j=3, k=4, l=3, m=3, n=4, o=4, p=3, q=3}, custom>} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<4x4xf32>, tensor<3x3xf32>, tensor<i32>)
    %1 = stablehlo.transpose %0#3, dims = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %2 = stablehlo.slice %0#2 [0:4, 0:3] : (tensor<4x4xf32>) -> tensor<4x3xf32>
    %3 = stablehlo.slice %1 [0:3, 0:3] : (tensor<3x3xf32>) -> tensor<3x3xf32>
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
    %11 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x3xf32>
    %12 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x3xi1>
    %13 = stablehlo.select %12, %2, %11 : tensor<4x3xi1>, tensor<4x3xf32>
    %14 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<3x3xf32>
    %16 = stablehlo.broadcast_in_dim %14, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %17 = stablehlo.select %16, %3, %15 : tensor<3x3xi1>, tensor<3x3xf32>
    return %13, %9, %17 : tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>
  }
  func.func private @_where(%arg0: tensor<3xi1>, %arg1: tensor<3xf32>, %arg2: tensor<i64>) -> tensor<3xf32> {
    %0 = stablehlo.convert %arg2 : (tensor<i64>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<3xi1>, tensor<3xf32>
    return %2 : tensor<3xf32>
  }
  func.func private @norm(%arg0: tensor<4x1xf32>) -> tensor<1xf32> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<4x1xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x1xf32>, tensor<f32>) -> tensor<1xf32>
    %2 = stablehlo.sqrt %1 : tensor<1xf32>
    return %2 : tensor<1xf32>
  }
}
