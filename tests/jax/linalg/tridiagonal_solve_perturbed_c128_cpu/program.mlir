module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f64>>) -> (tensor<4x2xcomplex<f64>> {jax.result_info = "result[0]"}, tensor<4x2xcomplex<f64>> {jax.result_info = "result[1]"}) {
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
    %13 = stablehlo.custom_call @tridiagonal_solve_perturbed_ffi(%3, %11, %7, %12) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i], [j], [k], [l, m])->([n, o]) {i=4, j=4, k=4, l=4, m=2, n=4, o=2}, custom>} : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4x2xcomplex<f64>>) -> tensor<4x2xcomplex<f64>>
    %14 = stablehlo.slice %arg0 [0:1, 0:4] : (tensor<4x4xcomplex<f64>>) -> tensor<1x4xcomplex<f64>>
    %15 = stablehlo.reshape %14 : (tensor<1x4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %16 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst_4 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %17 = "stablehlo.scatter"(%15, %16, %cst_4) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f64>>, %arg2: tensor<complex<f64>>):
      stablehlo.return %arg2 : tensor<complex<f64>>
    }) : (tensor<4xcomplex<f64>>, tensor<1xi32>, tensor<complex<f64>>) -> tensor<4xcomplex<f64>>
    %18 = stablehlo.slice %arg0 [1:2, 0:4] : (tensor<4x4xcomplex<f64>>) -> tensor<1x4xcomplex<f64>>
    %19 = stablehlo.reshape %18 : (tensor<1x4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
    %c_5 = stablehlo.constant dense<3> : tensor<i32>
    %20 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst_6 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %21 = "stablehlo.scatter"(%19, %20, %cst_6) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f64>>, %arg2: tensor<complex<f64>>):
      stablehlo.return %arg2 : tensor<complex<f64>>
    }) : (tensor<4xcomplex<f64>>, tensor<1xi32>, tensor<complex<f64>>) -> tensor<4xcomplex<f64>>
    %22 = stablehlo.slice %arg0 [2:3, 0:4] : (tensor<4x4xcomplex<f64>>) -> tensor<1x4xcomplex<f64>>
    %23 = stablehlo.reshape %22 : (tensor<1x4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
    %cst_7 = stablehlo.constant dense<(4.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %24 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<complex<f64>>) -> tensor<4xcomplex<f64>>
    %25 = stablehlo.add %23, %24 : tensor<4xcomplex<f64>>
    %26 = stablehlo.slice %arg0 [0:4, 0:2] : (tensor<4x4xcomplex<f64>>) -> tensor<4x2xcomplex<f64>>
    %cst_8 = stablehlo.constant dense<(1.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %27 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<complex<f64>>) -> tensor<1xcomplex<f64>>
    %cst_9 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %28 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<complex<f64>>) -> tensor<1xcomplex<f64>>
    %29 = stablehlo.multiply %28, %27 : tensor<1xcomplex<f64>>
    %30 = stablehlo.concatenate %29, %27, dim = 0 : (tensor<1xcomplex<f64>>, tensor<1xcomplex<f64>>) -> tensor<2xcomplex<f64>>
    %c_10 = stablehlo.constant dense<2> : tensor<i32>
    %31 = stablehlo.broadcast_in_dim %c_10, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %32 = "stablehlo.scatter"(%17, %31, %30) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f64>>, %arg2: tensor<complex<f64>>):
      stablehlo.return %arg2 : tensor<complex<f64>>
    }) : (tensor<4xcomplex<f64>>, tensor<1xi32>, tensor<2xcomplex<f64>>) -> tensor<4xcomplex<f64>>
    %33 = stablehlo.concatenate %27, %27, dim = 0 : (tensor<1xcomplex<f64>>, tensor<1xcomplex<f64>>) -> tensor<2xcomplex<f64>>
    %c_11 = stablehlo.constant dense<2> : tensor<i32>
    %34 = stablehlo.broadcast_in_dim %c_11, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %35 = "stablehlo.scatter"(%25, %34, %33) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f64>>, %arg2: tensor<complex<f64>>):
      stablehlo.return %arg2 : tensor<complex<f64>>
    }) : (tensor<4xcomplex<f64>>, tensor<1xi32>, tensor<2xcomplex<f64>>) -> tensor<4xcomplex<f64>>
    %c_12 = stablehlo.constant dense<2> : tensor<i32>
    %36 = stablehlo.broadcast_in_dim %c_12, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %37 = "stablehlo.scatter"(%21, %36, %27) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f64>>, %arg2: tensor<complex<f64>>):
      stablehlo.return %arg2 : tensor<complex<f64>>
    }) : (tensor<4xcomplex<f64>>, tensor<1xi32>, tensor<1xcomplex<f64>>) -> tensor<4xcomplex<f64>>
    %38 = stablehlo.custom_call @tridiagonal_solve_perturbed_ffi(%32, %35, %37, %26) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i], [j], [k], [l, m])->([n, o]) {i=4, j=4, k=4, l=4, m=2, n=4, o=2}, custom>} : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4x2xcomplex<f64>>) -> tensor<4x2xcomplex<f64>>
    return %13, %38 : tensor<4x2xcomplex<f64>>, tensor<4x2xcomplex<f64>>
  }
}
