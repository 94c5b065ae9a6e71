module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f32>>) -> (tensor<4x2x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %1 = stablehlo.real %0 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %2 = stablehlo.imag %0 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %3 = stablehlo.negate %2 : tensor<4x4xf32>
    %4 = stablehlo.complex %1, %3 : tensor<4x4xcomplex<f32>>
    %5 = stablehlo.dot_general %arg0, %4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %6 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %7 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %8 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %9 = stablehlo.add %6, %8 : tensor<4x4xi64>
    %10 = stablehlo.compare EQ, %9, %7, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %11 = stablehlo.convert %10 : (tensor<4x4xi1>) -> tensor<4x4xcomplex<f32>>
    %cst = stablehlo.constant dense<(4.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %12 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<4x4xcomplex<f32>>
    %13 = stablehlo.multiply %12, %11 : tensor<4x4xcomplex<f32>>
    %14 = stablehlo.add %5, %13 : tensor<4x4xcomplex<f32>>
    %15 = call @_cholesky(%14) : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %16 = stablehlo.slice %arg0 [0:4, 0:2] : (tensor<4x4xcomplex<f32>>) -> tensor<4x2xcomplex<f32>>
    %17 = call @_cho_solve(%15, %16) : (tensor<4x4xcomplex<f32>>, tensor<4x2xcomplex<f32>>) -> tensor<4x2xcomplex<f32>>
    %18 = stablehlo.real %17 : (tensor<4x2xcomplex<f32>>) -> tensor<4x2xf32>
    %19 = stablehlo.imag %17 : (tensor<4x2xcomplex<f32>>) -> tensor<4x2xf32>
    %20 = stablehlo.broadcast_in_dim %18, dims = [0, 1] : (tensor<4x2xf32>) -> tensor<4x2x1xf32>
    %21 = stablehlo.broadcast_in_dim %19, dims = [0, 1] : (tensor<4x2xf32>) -> tensor<4x2x1xf32>
    %22 = stablehlo.concatenate %20, %21, dim = 2 : (tensor<4x2x1xf32>, tensor<4x2x1xf32>) -> tensor<4x2x2xf32>
    return %22 : tensor<4x2x2xf32>
  }
  func.func private @_cholesky(%arg0: tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>> {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %1 = stablehlo.real %0 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %2 = stablehlo.imag %0 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %3 = stablehlo.negate %2 : tensor<4x4xf32>
    %4 = stablehlo.complex %1, %3 : tensor<4x4xcomplex<f32>>
    %5:2 = stablehlo.custom_call @cusolver_potrf_ffi(%4) {backend_config = "", mhlo.backend_config = {lower = true}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], []) {i=4, j=4, k=4, l=4}, custom>} : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<i32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %7 = stablehlo.compare EQ, %5#1, %6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %8 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst = stablehlo.constant dense<(0x7FC00000,0x7FC00000)> : tensor<complex<f32>>
    %9 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<4x4xcomplex<f32>>
    %10 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x4xi1>
    %11 = stablehlo.select %10, %5#0, %9 : tensor<4x4xi1>, tensor<4x4xcomplex<f32>>
    %12 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %13 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %14 = stablehlo.add %12, %13 : tensor<4x4xi64>
    %15 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %16 = stablehlo.compare GE, %14, %15, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %cst_1 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %17 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<complex<f32>>) -> tensor<4x4xcomplex<f32>>
    %18 = stablehlo.select %16, %11, %17 : tensor<4x4xi1>, tensor<4x4xcomplex<f32>>
    %19 = stablehlo.transpose %18, dims = [1, 0] : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %20 = stablehlo.real %19 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %21 = stablehlo.imag %19 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %22 = stablehlo.negate %21 : tensor<4x4xf32>
    %23 = stablehlo.complex %20, %22 : tensor<4x4xcomplex<f32>>
    return %23 : tensor<4x4xcomplex<f32>>
  }
  func.func private @_cho_solve(%arg0: tensor<4x4xcomplex<f32>>, %arg1: tensor<4x2xcomplex<f32>>) -> tensor<4x2xcomplex<f32>> {
    %0 = "stablehlo.triangular_solve"(%arg0, %arg1) <{left_side = true, lower = false, transpose_a = #stablehlo<transpose ADJOINT>, unit_diagonal = false}> : (tensor<4x4xcomplex<f32>>, tensor<4x2xcomplex<f32>>) -> tensor<4x2xcomplex<f32>>
    %1 = "stablehlo.triangular_solve"(%arg0, %0) <{left_side = true, lower = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<4x4xcomplex<f32>>, tensor<4x2xcomplex<f32>>) -> tensor<4x2xcomplex<f32>>
    return %1 : tensor<4x2xcomplex<f32>>
  }
}
