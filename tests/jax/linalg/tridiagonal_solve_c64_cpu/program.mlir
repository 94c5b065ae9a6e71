module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xcomplex<f32>>) -> (tensor<2x4x2x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:2, 0:1, 0:4] : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x1x4xcomplex<f32>>
    %1 = stablehlo.reshape %0 : (tensor<2x1x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<2xcomplex<f32>>
    %4 = "stablehlo.scatter"(%1, %2, %3) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f32>>, %arg2: tensor<complex<f32>>):
      stablehlo.return %arg2 : tensor<complex<f32>>
    }) : (tensor<2x4xcomplex<f32>>, tensor<1xi32>, tensor<2xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    %5 = stablehlo.slice %arg0 [0:2, 1:2, 0:4] : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x1x4xcomplex<f32>>
    %6 = stablehlo.reshape %5 : (tensor<2x1x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    %c_0 = stablehlo.constant dense<3> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst_1 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %8 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<complex<f32>>) -> tensor<2xcomplex<f32>>
    %9 = "stablehlo.scatter"(%6, %7, %8) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f32>>, %arg2: tensor<complex<f32>>):
      stablehlo.return %arg2 : tensor<complex<f32>>
    }) : (tensor<2x4xcomplex<f32>>, tensor<1xi32>, tensor<2xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    %10 = stablehlo.slice %arg0 [0:2, 2:3, 0:4] : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x1x4xcomplex<f32>>
    %11 = stablehlo.reshape %10 : (tensor<2x1x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    %cst_2 = stablehlo.constant dense<(4.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %12 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<complex<f32>>) -> tensor<2x4xcomplex<f32>>
    %13 = stablehlo.add %11, %12 : tensor<2x4xcomplex<f32>>
    %14 = stablehlo.slice %arg0 [0:2, 0:4, 0:2] : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x2xcomplex<f32>>
    %15:5 = stablehlo.custom_call @lapack_cgtsv_ffi(%4, %13, %9, %14) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 1, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [2], operand_index = 2, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [3], operand_index = 3, operand_tuple_indices = []>], result_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, k], [i, l], [i, m, n])->([i, o], [i, p], [i, q], [i, r, s], [i]) {i=2, j=4, k=4, l=4, m=4, n=2, o=4, p=4, q=4, r=4, s=2}, custom>} : (tensor<2x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<2x4x2xcomplex<f32>>) -> (tensor<2x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<2x4x2xcomplex<f32>>, tensor<2xi32>)
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %16 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %17 = stablehlo.compare EQ, %15#4, %16, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0] : (tensor<2xi1>) -> tensor<2x1x1xi1>
    %cst_4 = stablehlo.constant dense<(0x7FC00000,0x7FC00000)> : tensor<complex<f32>>
    %19 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<complex<f32>>) -> tensor<2x4x2xcomplex<f32>>
    %20 = stablehlo.broadcast_in_dim %18, dims = [0, 1, 2] : (tensor<2x1x1xi1>) -> tensor<2x4x2xi1>
    %21 = stablehlo.select %20, %15#3, %19 : tensor<2x4x2xi1>, tensor<2x4x2xcomplex<f32>>
    %22 = stablehlo.real %21 : (tensor<2x4x2xcomplex<f32>>) -> tensor<2x4x2xf32>
    %23 = stablehlo.imag %21 : (tensor<2x4x2xcomplex<f32>>) -> tensor<2x4x2xf32>
    %24 = stablehlo.broadcast_in_dim %22, dims = [0, 1, 2] : (tensor<2x4x2xf32>) -> tensor<2x4x2x1xf32>
    %25 = stablehlo.broadcast_in_dim %23, dims = [0, 1, 2] : (tensor<2x4x2xf32>) -> tensor<2x4x2x1xf32>
    %26 = stablehlo.concatenate %24, %25, dim = 3 : (tensor<2x4x2x1xf32>, tensor<2x4x2x1xf32>) -> tensor<2x4x2x2xf32>
    return %26 : tensor<2x4x2x2xf32>
  }
}
