module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xcomplex<f32>>) -> (tensor<2x4x2xcomplex<f32>> {jax.result_info = "result[0]"}, tensor<2x4x2xcomplex<f32>> {jax.result_info = "result[1]"}) {
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
    %15 = stablehlo.custom_call @tridiagonal_solve_perturbed_ffi(%4, %13, %9, %14) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, k], [i, l], [i, m, n])->([i, o, p]) {i=2, j=4, k=4, l=4, m=4, n=2, o=4, p=2}, custom>} : (tensor<2x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<2x4x2xcomplex<f32>>) -> tensor<2x4x2xcomplex<f32>>
    %16 = stablehlo.slice %arg0 [0:2, 0:1, 0:4] : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x1x4xcomplex<f32>>
    %17 = stablehlo.reshape %16 : (tensor<2x1x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %18 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst_4 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %19 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<complex<f32>>) -> tensor<2xcomplex<f32>>
    %20 = "stablehlo.scatter"(%17, %18, %19) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f32>>, %arg2: tensor<complex<f32>>):
      stablehlo.return %arg2 : tensor<complex<f32>>
    }) : (tensor<2x4xcomplex<f32>>, tensor<1xi32>, tensor<2xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    %21 = stablehlo.slice %arg0 [0:2, 1:2, 0:4] : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x1x4xcomplex<f32>>
    %22 = stablehlo.reshape %21 : (tensor<2x1x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    %c_5 = stablehlo.constant dense<3> : tensor<i32>
    %23 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst_6 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %24 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<complex<f32>>) -> tensor<2xcomplex<f32>>
    %25 = "stablehlo.scatter"(%22, %23, %24) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f32>>, %arg2: tensor<complex<f32>>):
      stablehlo.return %arg2 : tensor<complex<f32>>
    }) : (tensor<2x4xcomplex<f32>>, tensor<1xi32>, tensor<2xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    %26 = stablehlo.slice %arg0 [0:2, 2:3, 0:4] : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x1x4xcomplex<f32>>
    %27 = stablehlo.reshape %26 : (tensor<2x1x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    %cst_7 = stablehlo.constant dense<(4.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %28 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<complex<f32>>) -> tensor<2x4xcomplex<f32>>
    %29 = stablehlo.add %27, %28 : tensor<2x4xcomplex<f32>>
    %30 = stablehlo.slice %arg0 [0:2, 0:4, 0:2] : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x2xcomplex<f32>>
    %cst_8 = stablehlo.constant dense<(1.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %31 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<complex<f32>>) -> tensor<2x1xcomplex<f32>>
    %cst_9 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %32 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<complex<f32>>) -> tensor<2x1xcomplex<f32>>
    %33 = stablehlo.multiply %32, %31 : tensor<2x1xcomplex<f32>>
    %34 = stablehlo.concatenate %33, %31, dim = 1 : (tensor<2x1xcomplex<f32>>, tensor<2x1xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
    %c_10 = stablehlo.constant dense<2> : tensor<i32>
    %35 = stablehlo.broadcast_in_dim %c_10, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %36 = "stablehlo.scatter"(%20, %35, %34) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f32>>, %arg2: tensor<complex<f32>>):
      stablehlo.return %arg2 : tensor<complex<f32>>
    }) : (tensor<2x4xcomplex<f32>>, tensor<1xi32>, tensor<2x2xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    %37 = stablehlo.concatenate %31, %31, dim = 1 : (tensor<2x1xcomplex<f32>>, tensor<2x1xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
    %c_11 = stablehlo.constant dense<2> : tensor<i32>
    %38 = stablehlo.broadcast_in_dim %c_11, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %39 = "stablehlo.scatter"(%29, %38, %37) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f32>>, %arg2: tensor<complex<f32>>):
      stablehlo.return %arg2 : tensor<complex<f32>>
    }) : (tensor<2x4xcomplex<f32>>, tensor<1xi32>, tensor<2x2xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    %c_12 = stablehlo.constant dense<2> : tensor<i32>
    %40 = stablehlo.broadcast_in_dim %c_12, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %41 = "stablehlo.scatter"(%25, %40, %31) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<complex<f32>>, %arg2: tensor<complex<f32>>):
      stablehlo.return %arg2 : tensor<complex<f32>>
    }) : (tensor<2x4xcomplex<f32>>, tensor<1xi32>, tensor<2x1xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
    %42 = stablehlo.custom_call @tridiagonal_solve_perturbed_ffi(%36, %39, %41, %30) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, k], [i, l], [i, m, n])->([i, o, p]) {i=2, j=4, k=4, l=4, m=4, n=2, o=4, p=2}, custom>} : (tensor<2x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<2x4x2xcomplex<f32>>) -> tensor<2x4x2xcomplex<f32>>
    return %15, %42 : tensor<2x4x2xcomplex<f32>>, tensor<2x4x2xcomplex<f32>>
  }
}
