module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xf64>) -> (tensor<2xf64> {jax.result_info = "result[0]"}, tensor<2xf64> {jax.result_info = "result[1]"}) {
    %0:2 = call @slogdet(%arg0) : (tensor<2x4x4xf64>) -> (tensor<2xf64>, tensor<2xf64>)
    return %0#0, %0#1 : tensor<2xf64>, tensor<2xf64>
  }
  func.func private @slogdet(%arg0: tensor<2x4x4xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
    %0:3 = stablehlo.custom_call @cusolver_getrf_ffi(%arg0) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n], [i]) {i=2, j=4, k=4, l=4, m=4, n=4}, custom>} : (tensor<2x4x4xf64>) -> (tensor<2x4x4xf64>, tensor<2x4xi32>, tensor<2xi32>)
    %c = stablehlo.constant dense<1> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2x4xi32>
    %2 = stablehlo.subtract %0#1, %1 : tensor<2x4xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %4 = stablehlo.compare GE, %0#2, %3, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<2xi1>) -> tensor<2x1x1xi1>
    %cst = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<2x4x4xf64>
    %7 = stablehlo.broadcast_in_dim %5, dims = [0, 1, 2] : (tensor<2x1x1xi1>) -> tensor<2x4x4xi1>
    %8 = stablehlo.select %7, %0#0, %6 : tensor<2x4x4xi1>, tensor<2x4x4xf64>
    %9 = stablehlo.custom_call @cu_lu_pivots_to_permutation(%2) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, k]) {i=2, j=4, k=4}, custom>} : (tensor<2x4xi32>) -> tensor<2x4xi32>
    %10 = call @diagonal(%8) : (tensor<2x4x4xf64>) -> tensor<2x4xf64>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %11 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f64>) -> tensor<2x4xf64>
    %12 = stablehlo.compare EQ, %10, %11, FLOAT : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xi1>
    %c_2 = stablehlo.constant dense<false> : tensor<i1>
    %13 = stablehlo.reduce(%12 init: %c_2) applies stablehlo.or across dimensions = [1] : (tensor<2x4xi1>, tensor<i1>) -> tensor<2xi1>
    %14 = stablehlo.iota dim = 0 : tensor<4xi32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [1] : (tensor<4xi32>) -> tensor<1x4xi32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1] : (tensor<1x4xi32>) -> tensor<2x4xi32>
    %17 = stablehlo.compare NE, %2, %16, SIGNED : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
    %18 = call @count_nonzero(%17) : (tensor<2x4xi1>) -> tensor<2xi64>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %19 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f64>) -> tensor<2x4xf64>
    %20 = stablehlo.compare LT, %10, %19, FLOAT : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xi1>
    %21 = call @count_nonzero(%20) : (tensor<2x4xi1>) -> tensor<2xi64>
    %22 = stablehlo.add %18, %21 : tensor<2xi64>
    %c_4 = stablehlo.constant dense<2> : tensor<i64>
    %23 = call @remainder(%22, %c_4) : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
    %c_5 = stablehlo.constant dense<-2> : tensor<i64>
    %24 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i64>) -> tensor<2xi64>
    %25 = stablehlo.multiply %24, %23 : tensor<2xi64>
    %c_6 = stablehlo.constant dense<1> : tensor<i64>
    %26 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i64>) -> tensor<2xi64>
    %27 = stablehlo.add %25, %26 : tensor<2xi64>
    %28 = stablehlo.convert %27 : (tensor<2xi64>) -> tensor<2xf64>
    %cst_7 = stablehlo.constant dense<1.000000e+00> : tensor<f64>
    %29 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f64>) -> tensor<2xf64>
    %30 = stablehlo.multiply %29, %28 : tensor<2xf64>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %31 = call @_where_0(%13, %cst_8, %30) : (tensor<2xi1>, tensor<f64>, tensor<2xf64>) -> tensor<2xf64>
    %32 = stablehlo.abs %10 : tensor<2x4xf64>
    %33 = stablehlo.log %32 : tensor<2x4xf64>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %34 = stablehlo.reduce(%33 init: %cst_9) applies stablehlo.add across dimensions = [1] : (tensor<2x4xf64>, tensor<f64>) -> tensor<2xf64>
    %cst_10 = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
    %35 = call @_where_0(%13, %cst_10, %34) : (tensor<2xi1>, tensor<f64>, tensor<2xf64>) -> tensor<2xf64>
    return %31, %35 : tensor<2xf64>, tensor<2xf64>
  }
  func.func private @diagonal(%arg0: tensor<2x4x4xf64>) -> tensor<2x4xf64> {
    %0 = stablehlo.iota dim = 0 : tensor<4xi64>
    %1 = stablehlo.iota dim = 0 : tensor<4xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4xi64>
    %3 = stablehlo.compare LT, %0, %2, SIGNED : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
    %c_0 = stablehlo.constant dense<4> : tensor<i64>
    %4 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i64>) -> tensor<4xi64>
    %5 = stablehlo.add %0, %4 : tensor<4xi64>
    %6 = stablehlo.select %3, %5, %0 : tensor<4xi1>, tensor<4xi64>
    %c_1 = stablehlo.constant dense<0> : tensor<i64>
    %7 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i64>) -> tensor<4xi64>
    %8 = stablehlo.compare LT, %1, %7, SIGNED : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
    %c_2 = stablehlo.constant dense<4> : tensor<i64>
    %9 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i64>) -> tensor<4xi64>
    %10 = stablehlo.add %1, %9 : tensor<4xi64>
    %11 = stablehlo.select %8, %10, %1 : tensor<4xi1>, tensor<4xi64>
    %12 = stablehlo.convert %6 : (tensor<4xi64>) -> tensor<4xi32>
    %13 = stablehlo.convert %11 : (tensor<4xi64>) -> tensor<4xi32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
    %15 = stablehlo.broadcast_in_dim %13, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
    %16 = stablehlo.concatenate %14, %15, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
    %17 = "stablehlo.gather"(%arg0, %16) <{dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1, 2], start_index_map = [1, 2], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 2, 1, 1>}> : (tensor<2x4x4xf64>, tensor<4x2xi32>) -> tensor<2x4xf64>
    return %17 : tensor<2x4xf64>
  }
  func.func private @count_nonzero(%arg0: tensor<2x4xi1>) -> tensor<2xi64> {
    %c = stablehlo.constant dense<false> : tensor<i1>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i1>) -> tensor<2x4xi1>
    %1 = stablehlo.compare NE, %arg0, %0, UNSIGNED : (tensor<2x4xi1>, tensor<2x4xi1>) -> tensor<2x4xi1>
    %2 = stablehlo.convert %1 : (tensor<2x4xi1>) -> tensor<2x4xi32>
    %3 = stablehlo.convert %2 : (tensor<2x4xi32>) -> tensor<2x4xi64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %4 = stablehlo.reduce(%3 init: %c_0) applies stablehlo.add across dimensions = [1] : (tensor<2x4xi64>, tensor<i64>) -> tensor<2xi64>
    return %4 : tensor<2xi64>
  }
  func.func private @remainder(%arg0: tensor<2xi64>, %arg1: tensor<i64>) -> tensor<2xi64> {
    %0 = stablehlo.convert %arg1 : tensor<i64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %1 = stablehlo.compare EQ, %0, %c, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<i64>
    %2 = call @_where(%1, %c_0, %0) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i64>) -> tensor<2xi64>
    %4 = stablehlo.remainder %arg0, %3 : tensor<2xi64>
    %c_1 = stablehlo.constant dense<0> : tensor<i64>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i64>) -> tensor<2xi64>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
    %c_2 = stablehlo.constant dense<0> : tensor<i64>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i64>) -> tensor<2xi64>
    %8 = stablehlo.compare LT, %4, %7, SIGNED : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<i64>
    %9 = stablehlo.compare LT, %2, %c_3, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<i1>) -> tensor<2xi1>
    %11 = stablehlo.compare NE, %8, %10, UNSIGNED : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
    %12 = stablehlo.and %11, %6 : tensor<2xi1>
    %13 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i64>) -> tensor<2xi64>
    %14 = stablehlo.add %4, %13 : tensor<2xi64>
    %15 = stablehlo.select %12, %14, %4 : tensor<2xi1>, tensor<2xi64>
    return %15 : tensor<2xi64>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<i64>, %arg2: tensor<i64>) -> tensor<i64> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i64>
    return %0 : tensor<i64>
  }
  func.func private @_where_0(%arg0: tensor<2xi1>, %arg1: tensor<f64>, %arg2: tensor<2xf64>) -> tensor<2xf64> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f64>) -> tensor<2xf64>
    %1 = stablehlo.select %arg0, %0, %arg2 : tensor<2xi1>, tensor<2xf64>
    return %1 : tensor<2xf64>
  }
}
