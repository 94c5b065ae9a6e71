module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xf32>) -> (tensor<2x4x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %1 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %3 = stablehlo.add %0, %2 : tensor<4x4xi64>
    %4 = stablehlo.compare EQ, %3, %1, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %5 = stablehlo.convert %4 : (tensor<4x4xi1>) -> tensor<4x4xf32>
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x4xf32>
    %7 = stablehlo.multiply %6, %5 : tensor<4x4xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [1, 2] : (tensor<4x4xf32>) -> tensor<1x4x4xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<1x4x4xf32>) -> tensor<2x4x4xf32>
    %10 = stablehlo.add %arg0, %9 : tensor<2x4x4xf32>
    %11 = stablehlo.slice %arg0 [0:2, 0:4, 0:2] : (tensor<2x4x4xf32>) -> tensor<2x4x2xf32>
    %12 = call @_solve_triangular(%10, %11) : (tensor<2x4x4xf32>, tensor<2x4x2xf32>) -> tensor<2x4x2xf32>
    return %12 : tensor<2x4x2xf32>
  }
  func.func private @_solve_triangular(%arg0: tensor<2x4x4xf32>, %arg1: tensor<2x4x2xf32>) -> tensor<2x4x2xf32> {
    %0 = stablehlo.custom_call @lapack_strsm_ffi(%arg0, %arg1) {backend_config = "", mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k], [i, l, m])->([i, n, o]) {i=2, j=4, k=4, l=4, m=2, n=4, o=2}, custom>} : (tensor<2x4x4xf32>, tensor<2x4x2xf32>) -> tensor<2x4x2xf32>
    return %0 : tensor<2x4x2xf32>
  }
}
