module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xcomplex<f32>>) -> (tensor<2x4xf32> {jax.result_info = "result[0]"}, tensor<2x4x4x2xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.transpose %arg0, dims = [0, 2, 1] : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x4xcomplex<f32>>
    %1 = stablehlo.real %0 : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x4xf32>
    %2 = stablehlo.imag %0 : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x4xf32>
    %3 = stablehlo.negate %2 : tensor<2x4x4xf32>
    %4 = stablehlo.complex %1, %3 : tensor<2x4x4xcomplex<f32>>
    %5 = stablehlo.add %arg0, %4 : tensor<2x4x4xcomplex<f32>>
    %cst = stablehlo.constant dense<(2.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<2x4x4xcomplex<f32>>
    %7 = stablehlo.divide %5, %6 : tensor<2x4x4xcomplex<f32>>
    %8:2 = call @eigh(%7) : (tensor<2x4x4xcomplex<f32>>) -> (tensor<2x4xf32>, tensor<2x4x4xcomplex<f32>>)
    %9 = stablehlo.broadcast_in_dim %8#0, dims = [0, 2] : (tensor<2x4xf32>) -> tensor<2x1x4xf32>
    %10 = stablehlo.convert %9 : (tensor<2x1x4xf32>) -> tensor<2x1x4xcomplex<f32>>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1, 2] : (tensor<2x1x4xcomplex<f32>>) -> tensor<2x4x4xcomplex<f32>>
    %12 = stablehlo.multiply %8#1, %11 : tensor<2x4x4xcomplex<f32>>
    %13 = stablehlo.transpose %8#1, dims = [0, 2, 1] : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x4xcomplex<f32>>
    %14 = stablehlo.real %13 : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x4xf32>
    %15 = stablehlo.imag %13 : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x4xf32>
    %16 = stablehlo.negate %15 : tensor<2x4x4xf32>
    %17 = stablehlo.complex %14, %16 : tensor<2x4x4xcomplex<f32>>
    %18 = stablehlo.dot_general %12, %17, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x4x4xcomplex<f32>>, tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x4xcomplex<f32>>
    %19 = stablehlo.real %18 : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x4xf32>
    %20 = stablehlo.imag %18 : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x4xf32>
    %21 = stablehlo.broadcast_in_dim %19, dims = [0, 1, 2] : (tensor<2x4x4xf32>) -> tensor<2x4x4x1xf32>
    %22 = stablehlo.broadcast_in_dim %20, dims = [0, 1, 2] : (tensor<2x4x4xf32>) -> tensor<2x4x4x1xf32>
    %23 = stablehlo.concatenate %21, %22, dim = 3 : (tensor<2x4x4x1xf32>, tensor<2x4x4x1xf32>) -> tensor<2x4x4x2xf32>
    return %8#0, %23 : tensor<2x4xf32>, tensor<2x4x4x2xf32>
  }
  func.func private @eigh(%arg0: tensor<2x4x4xcomplex<f32>>) -> (tensor<2x4xf32>, tensor<2x4x4xcomplex<f32>>) {
    %0 = stablehlo.transpose %arg0, dims = [0, 2, 1] : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x4xcomplex<f32>>
    %1 = stablehlo.real %0 : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x4xf32>
    %2 = stablehlo.imag %0 : (tensor<2x4x4xcomplex<f32>>) -> tensor<2x4x4xf32>
    %3 = stablehlo.negate %2 : tensor<2x4x4xf32>
    %4 = stablehlo.complex %1, %3 : tensor<2x4x4xcomplex<f32>>
    %5 = stablehlo.add %arg0, %4 : tensor<2x4x4xcomplex<f32>>
    %cst = stablehlo.constant dense<(2.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<2x4x4xcomplex<f32>>
    %7 = stablehlo.divide %5, %6 : tensor<2x4x4xcomplex<f32>>
    %8:3 = stablehlo.custom_call @lapack_cheevd_ffi(%7) {backend_config = "", mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n], [i]) {i=2, j=4, k=4, l=4, m=4, n=4}, custom>} : (tensor<2x4x4xcomplex<f32>>) -> (tensor<2x4x4xcomplex<f32>>, tensor<2x4xf32>, tensor<2xi32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %10 = stablehlo.compare EQ, %8#2, %9, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0] : (tensor<2xi1>) -> tensor<2x1x1xi1>
    %cst_0 = stablehlo.constant dense<(0x7FC00000,0x7FC00000)> : tensor<complex<f32>>
    %12 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<complex<f32>>) -> tensor<2x4x4xcomplex<f32>>
    %13 = stablehlo.broadcast_in_dim %11, dims = [0, 1, 2] : (tensor<2x1x1xi1>) -> tensor<2x4x4xi1>
    %14 = stablehlo.select %13, %8#0, %12 : tensor<2x4x4xi1>, tensor<2x4x4xcomplex<f32>>
    %15 = stablehlo.broadcast_in_dim %10, dims = [0] : (tensor<2xi1>) -> tensor<2x1xi1>
    %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %17 = stablehlo.broadcast_in_dim %15, dims = [0, 1] : (tensor<2x1xi1>) -> tensor<2x4xi1>
    %18 = stablehlo.select %17, %8#1, %16 : tensor<2x4xi1>, tensor<2x4xf32>
    return %18, %14 : tensor<2x4xf32>, tensor<2x4x4xcomplex<f32>>
  }
}
