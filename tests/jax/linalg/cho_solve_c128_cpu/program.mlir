module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f64>>) -> (tensor<4x2x2xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %1 = stablehlo.real %0 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %2 = stablehlo.imag %0 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %3 = stablehlo.negate %2 : tensor<4x4xf64>
    %4 = stablehlo.complex %1, %3 : tensor<4x4xcomplex<f64>>
    %5 = stablehlo.dot_general %arg0, %4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %6 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %7 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %8 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %9 = stablehlo.add %6, %8 : tensor<4x4xi64>
    %10 = stablehlo.compare EQ, %9, %7, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %11 = stablehlo.convert %10 : (tensor<4x4xi1>) -> tensor<4x4xcomplex<f64>>
    %cst = stablehlo.constant dense<(4.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %12 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %13 = stablehlo.multiply %12, %11 : tensor<4x4xcomplex<f64>>
    %14 = stablehlo.add %5, %13 : tensor<4x4xcomplex<f64>>
    %15 = call @_cholesky(%14) : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %16 = stablehlo.slice %arg0 [0:4, 0:2] : (tensor<4x4xcomplex<f64>>) -> tensor<4x2xcomplex<f64>>
    %17 = call @_cho_solve(%15, %16) : (tensor<4x4xcomplex<f64>>, tensor<4x2xcomplex<f64>>) -> tensor<4x2xcomplex<f64>>
    %18 = stablehlo.real %17 : (tensor<4x2xcomplex<f64>>) -> tensor<4x2xf64>
    %19 = stablehlo.imag %17 : (tensor<4x2xcomplex<f64>>) -> tensor<4x2xf64>
    %20 = stablehlo.broadcast_in_dim %18, dims = [0, 1] : (tensor<4x2xf64>) -> tensor<4x2x1xf64>
    %21 = stablehlo.broadcast_in_dim %19, dims = [0, 1] : (tensor<4x2xf64>) -> tensor<4x2x1xf64>
    %22 = stablehlo.concatenate %20, %21, dim = 2 : (tensor<4x2x1xf64>, tensor<4x2x1xf64>) -> tensor<4x2x2xf64>
    return %22 : tensor<4x2x2xf64>
  }
  func.func private @_cholesky(%arg0: tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>> {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %1 = stablehlo.real %0 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %2 = stablehlo.imag %0 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %3 = stablehlo.negate %2 : tensor<4x4xf64>
    %4 = stablehlo.complex %1, %3 : tensor<4x4xcomplex<f64>>
    %5:2 = stablehlo.custom_call @lapack_zpotrf_ffi(%4) {backend_config = "", mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], []) {i=4, j=4, k=4, l=4}, custom>} : (tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<i32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %7 = stablehlo.compare EQ, %5#1, %6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %8 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst = stablehlo.constant dense<(0x7FF8000000000000,0x7FF8000000000000)> : tensor<complex<f64>>
    %9 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %10 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x4xi1>
    %11 = stablehlo.select %10, %5#0, %9 : tensor<4x4xi1>, tensor<4x4xcomplex<f64>>
    %12 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %13 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %14 = stablehlo.add %12, %13 : tensor<4x4xi64>
    %15 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %16 = stablehlo.compare GE, %14, %15, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %cst_1 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %17 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %18 = stablehlo.select %16, %11, %17 : tensor<4x4xi1>, tensor<4x4xcomplex<f64>>
    %19 = stablehlo.transpose %18, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %20 = stablehlo.real %19 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %21 = stablehlo.imag %19 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %22 = stablehlo.negate %21 : tensor<4x4xf64>
    %23 = stablehlo.complex %20, %22 : tensor<4x4xcomplex<f64>>
    return %23 : tensor<4x4xcomplex<f64>>
  }
  func.func private @_cho_solve(%arg0: tensor<4x4xcomplex<f64>>, %arg1: tensor<4x2xcomplex<f64>>) -> tensor<4x2xcomplex<f64>> {
    %0 = stablehlo.custom_call @lapack_ztrsm_ffi(%arg0, %arg1) {backend_config = "", mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 67 : ui8, uplo = 85 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=2, m=4, n=2}, custom>} : (tensor<4x4xcomplex<f64>>, tensor<4x2xcomplex<f64>>) -> tensor<4x2xcomplex<f64>>
    %1 = stablehlo.custom_call @lapack_ztrsm_ffi(%arg0, %0) {backend_config = "", mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 85 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=2, m=4, n=2}, custom>} : (tensor<4x4xcomplex<f64>>, tensor<4x2xcomplex<f64>>) -> tensor<4x2xcomplex<f64>>
    return %1 : tensor<4x2xcomplex<f64>>
  }
}
