module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f32>>) -> (tensor<4x2x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:1, 0:4] : (tensor<4x4xcomplex<f32>>) -> tensor<1x4xcomplex<f32>>
    %1 = stablehlo.reshape %0 : (tensor<1x4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %3 = "stablehlo.scatter"(%1, %2, %cst) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f32>>, %arg2: tensor<complex<f32>>):
      stablehlo.return %arg2 : tensor<complex<f32>>
    }) : (tensor<4xcomplex<f32>>, tensor<1xi32>, tensor<complex<f32>>) -> tensor<4xcomplex<f32>>
    %4 = stablehlo.slice %arg0 [1:2, 0:4] : (tensor<4x4xcomplex<f32>>) -> tensor<1x4xcomplex<f32>>
    %5 = stablehlo.reshape %4 : (tensor<1x4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
    %c_0 = stablehlo.constant dense<3> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst_1 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %7 = "stablehlo.scatter"(%5, %6, %cst_1) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f32>>, %arg2: tensor<complex<f32>>):
      stablehlo.return %arg2 : tensor<complex<f32>>
    }) : (tensor<4xcomplex<f32>>, tensor<1xi32>, tensor<complex<f32>>) -> tensor<4xcomplex<f32>>
    %8 = stablehlo.slice %arg0 [2:3, 0:4] : (tensor<4x4xcomplex<f32>>) -> tensor<1x4xcomplex<f32>>
    %9 = stablehlo.reshape %8 : (tensor<1x4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
    %cst_2 = stablehlo.constant dense<(4.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %10 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<complex<f32>>) -> tensor<4xcomplex<f32>>
    %11 = stablehlo.add %9, %10 : tensor<4xcomplex<f32>>
    %12 = stablehlo.slice %arg0 [0:4, 0:2] : (tensor<4x4xcomplex<f32>>) -> tensor<4x2xcomplex<f32>>
    %13 = stablehlo.custom_call @cusparse_gtsv2_ffi(%3, %11, %7, %12) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 3, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i], [j], [k], [l, m])->([n, o]) {i=4, j=4, k=4, l=4, m=2, n=4, o=2}, custom>} : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<4x2xcomplex<f32>>) -> tensor<4x2xcomplex<f32>>
    %14 = stablehlo.real %13 : (tensor<4x2xcomplex<f32>>) -> tensor<4x2xf32>
    %15 = stablehlo.imag %13 : (tensor<4x2xcomplex<f32>>) -> tensor<4x2xf32>
    %16 = stablehlo.broadcast_in_dim %14, dims = [0, 1] : (tensor<4x2xf32>) -> tensor<4x2x1xf32>
    %17 = stablehlo.broadcast_in_dim %15, dims = [0, 1] : (tensor<4x2xf32>) -> tensor<4x2x1xf32>
    %18 = stablehlo.concatenate %16, %17, dim = 2 : (tensor<4x2x1xf32>, tensor<4x2x1xf32>) -> tensor<4x2x2xf32>
    return %18 : tensor<4x2x2xf32>
  }
}
