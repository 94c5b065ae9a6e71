module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xf32>) -> (tensor<4x2xf32> {jax.result_info = "result[0]"}, tensor<4x2xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.slice %arg0 [0:1, 0:4] : (tensor<4x4xf32>) -> tensor<1x4xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4xf32>) -> tensor<4xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = "stablehlo.scatter"(%1, %2, %cst) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      stablehlo.return %arg2 : tensor<f32>
    }) : (tensor<4xf32>, tensor<1xi32>, tensor<f32>) -> tensor<4xf32>
    %4 = stablehlo.slice %arg0 [1:2, 0:4] : (tensor<4x4xf32>) -> tensor<1x4xf32>
    %5 = stablehlo.reshape %4 : (tensor<1x4xf32>) -> tensor<4xf32>
    %c_0 = stablehlo.constant dense<3> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = "stablehlo.scatter"(%5, %6, %cst_1) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      stablehlo.return %arg2 : tensor<f32>
    }) : (tensor<4xf32>, tensor<1xi32>, tensor<f32>) -> tensor<4xf32>
    %8 = stablehlo.slice %arg0 [2:3, 0:4] : (tensor<4x4xf32>) -> tensor<1x4xf32>
    %9 = stablehlo.reshape %8 : (tensor<1x4xf32>) -> tensor<4xf32>
    %cst_2 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %11 = stablehlo.add %9, %10 : tensor<4xf32>
    %12 = stablehlo.slice %arg0 [0:4, 0:2] : (tensor<4x4xf32>) -> tensor<4x2xf32>
    %13 = stablehlo.custom_call @hip_tridiagonal_solve_perturbed(%3, %11, %7, %12) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i], [j], [k], [l, m])->([n, o]) {i=4, j=4, k=4, l=4, m=2, n=4, o=2}, custom>} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    %14 = stablehlo.slice %arg0 [0:1, 0:4] : (tensor<4x4xf32>) -> tensor<1x4xf32>
    %15 = stablehlo.reshape %14 : (tensor<1x4xf32>) -> tensor<4xf32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %16 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %17 = "stablehlo.scatter"(%15, %16, %cst_4) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      stablehlo.return %arg2 : tensor<f32>
    }) : (tensor<4xf32>, tensor<1xi32>, tensor<f32>) -> tensor<4xf32>
    %18 = stablehlo.slice %arg0 [1:2, 0:4] : (tensor<4x4xf32>) -> tensor<1x4xf32>
    %19 = stablehlo.reshape %18 : (tensor<1x4xf32>) -> tensor<4xf32>
    %c_5 = stablehlo.constant dense<3> : tensor<i32>
    %20 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %21 = "stablehlo.scatter"(%19, %20, %cst_6) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      stablehlo.return %arg2 : tensor<f32>
    }) : (tensor<4xf32>, tensor<1xi32>, tensor<f32>) -> tensor<4xf32>
    %22 = stablehlo.slice %arg0 [2:3, 0:4] : (tensor<4x4xf32>) -> tensor<1x4xf32>
    %23 = stablehlo.reshape %22 : (tensor<1x4xf32>) -> tensor<4xf32>
    %cst_7 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %24 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %25 = stablehlo.add %23, %24 : tensor<4xf32>
    %26 = stablehlo.slice %arg0 [0:4, 0:2] : (tensor<4x4xf32>) -> tensor<4x2xf32>
    %cst_8 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %27 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %28 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %29 = stablehlo.multiply %28, %27 : tensor<1xf32>
    %30 = stablehlo.concatenate %29, %27, dim = 0 : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
    %c_10 = stablehlo.constant dense<2> : tensor<i32>
    %31 = stablehlo.broadcast_in_dim %c_10, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %32 = "stablehlo.scatter"(%17, %31, %30) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      stablehlo.return %arg2 : tensor<f32>
    }) : (tensor<4xf32>, tensor<1xi32>, tensor<2xf32>) -> tensor<4xf32>
    %33 = stablehlo.concatenate %27, %27, dim = 0 : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
    %c_11 = stablehlo.constant dense<2> : tensor<i32>
    %34 = stablehlo.broadcast_in_dim %c_11, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %35 = "stablehlo.scatter"(%25, %34, %33) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      stablehlo.return %arg2 : tensor<f32>
    }) : (tensor<4xf32>, tensor<1xi32>, tensor<2xf32>) -> tensor<4xf32>
    %c_12 = stablehlo.constant dense<2> : tensor<i32>
    %36 = stablehlo.broadcast_in_dim %c_12, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %37 = "stablehlo.scatter"(%21, %36, %27) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      stablehlo.return %arg2 : tensor<f32>
    }) : (tensor<4xf32>, tensor<1xi32>, tensor<1xf32>) -> tensor<4xf32>
    %38 = stablehlo.custom_call @hip_tridiagonal_solve_perturbed(%32, %35, %37, %26) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i], [j], [k], [l, m])->([n, o]) {i=4, j=4, k=4, l=4, m=2, n=4, o=2}, custom>} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    return %13, %38 : tensor<4x2xf32>, tensor<4x2xf32>
  }
}
