module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f64>>) -> (tensor<4x2x2xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:1, 0:4] : (tensor<4x4xcomplex<f64>>) -> tensor<1x4xcomplex<f64>>
    %1 = stablehlo.reshape %0 : (tensor<1x4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %3 = "stablehlo.scatter"(%1, %2, %cst) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f64>>, %arg2: tensor<complex<f64>>):
      stablehlo.return %arg2 : tensor<complex<f64>>
    }) : (tensor<4xcomplex<f64>>, tensor<1xi32>, tensor<complex<f64>>) -> tensor<4xcomplex<f64>>
    %4 = stablehlo.slice %arg0 [1:2, 0:4] : (tensor<4x4xcomplex<f64>>) -> tensor<1x4xcomplex<f64>>
    %5 = stablehlo.reshape %4 : (tensor<1x4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
    %c_0 = stablehlo.constant dense<3> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst_1 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %7 = "stablehlo.scatter"(%5, %6, %cst_1) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f64>>, %arg2: tensor<complex<f64>>):
      stablehlo.return %arg2 : tensor<complex<f64>>
    }) : (tensor<4xcomplex<f64>>, tensor<1xi32>, tensor<complex<f64>>) -> tensor<4xcomplex<f64>>
    %8 = stablehlo.slice %arg0 [2:3, 0:4] : (tensor<4x4xcomplex<f64>>) -> tensor<1x4xcomplex<f64>>
    %9 = stablehlo.reshape %8 : (tensor<1x4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
    %cst_2 = stablehlo.constant dense<(4.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %10 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<complex<f64>>) -> tensor<4xcomplex<f64>>
    %11 = stablehlo.add %9, %10 : tensor<4xcomplex<f64>>
    %12 = stablehlo.slice %arg0 [0:4, 0:2] : (tensor<4x4xcomplex<f64>>) -> tensor<4x2xcomplex<f64>>
    %13:5 = stablehlo.custom_call @lapack_zgtsv_ffi(%3, %11, %7, %12) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 1, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [2], operand_index = 2, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [3], operand_index = 3, operand_tuple_indices = []>], result_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i], [j], [k], [l, m])->([n], [o], [p], [q, r], []) {i=4, j=4, k=4, l=4, m=2, n=4, o=4, p=4, q=4, r=2}, custom>} : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4x2xcomplex<f64>>) -> (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4x2xcomplex<f64>>, tensor<i32>)
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %14 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<i32>
    %15 = stablehlo.compare EQ, %13#4, %14, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %16 = stablehlo.broadcast_in_dim %15, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst_4 = stablehlo.constant dense<(0x7FF8000000000000,0x7FF8000000000000)> : tensor<complex<f64>>
    %17 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<complex<f64>>) -> tensor<4x2xcomplex<f64>>
    %18 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x2xi1>
    %19 = stablehlo.select %18, %13#3, %17 : tensor<4x2xi1>, tensor<4x2xcomplex<f64>>
    %20 = stablehlo.real %19 : (tensor<4x2xcomplex<f64>>) -> tensor<4x2xf64>
    %21 = stablehlo.imag %19 : (tensor<4x2xcomplex<f64>>) -> tensor<4x2xf64>
    %22 = stablehlo.broadcast_in_dim %20, dims = [0, 1] : (tensor<4x2xf64>) -> tensor<4x2x1xf64>
    %23 = stablehlo.broadcast_in_dim %21, dims = [0, 1] : (tensor<4x2xf64>) -> tensor<4x2x1xf64>
    %24 = stablehlo.concatenate %22, %23, dim = 2 : (tensor<4x2x1xf64>, tensor<4x2x1xf64>) -> tensor<4x2x2xf64>
    return %24 : tensor<4x2x2xf64>
  }
}
