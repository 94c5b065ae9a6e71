module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xf32>) -> (tensor<2x4x2xf32> {jax.result_info = "result[0]"}, tensor<2x2x4xf32> {jax.result_info = "result[1]"}) {
    %0:2 = stablehlo.custom_call @lapack_sgeqrf_ffi(%arg0) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n]) {i=2, j=4, k=4, l=4, m=4, n=4}, custom>} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xf32>)
    %1 = stablehlo.slice %arg0 [0:2, 0:4, 0:2] : (tensor<2x4x4xf32>) -> tensor<2x4x2xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4x2xf32>
    %3 = stablehlo.add %1, %2 : tensor<2x4x2xf32>
    %4 = stablehlo.custom_call @lapack_sormqr_ffi(%0#0, %0#1, %3) {backend_config = "", mhlo.backend_config = {left = true, transpose = false}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 2, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k], [i, l], [i, m, n])->([i, o, p]) {i=2, j=4, k=4, l=4, m=4, n=2, o=4, p=2}, custom>} : (tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2x4x2xf32>) -> tensor<2x4x2xf32>
    %5 = stablehlo.slice %arg0 [0:2, 0:2, 0:4] : (tensor<2x4x4xf32>) -> tensor<2x2x4xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x2x4xf32>
    %7 = stablehlo.add %5, %6 : tensor<2x2x4xf32>
    %8 = stablehlo.custom_call @lapack_sormqr_ffi(%0#0, %0#1, %7) {backend_config = "", mhlo.backend_config = {left = false, transpose = true}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 2, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k], [i, l], [i, m, n])->([i, o, p]) {i=2, j=4, k=4, l=4, m=2, n=4, o=2, p=4}, custom>} : (tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
    return %4, %8 : tensor<2x4x2xf32>, tensor<2x2x4xf32>
  }
}
