module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f32>>) -> (tensor<3x4x2xf32> {jax.result_info = "result[0]"}, tensor<3xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.slice %arg0 [0:3, 0:4] : (tensor<4x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
    %1:5 = stablehlo.custom_call @cusolver_gesvd_ffi(%0) {backend_config = "", mhlo.backend_config = {compute_uv = true, full_matrices = false, transposed = true}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m], [n, o], [p, q], []) {i=3, j=4, k=3, l=4, m=3, n=3, o=4, p=3, q=3}, custom>} : (tensor<3x4xcomplex<f32>>) -> (tensor<3x4xcomplex<f32>>, tensor<3xf32>, tensor<3x4xcomplex<f32>>, tensor<3x3xcomplex<f32>>, tensor<i32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %3 = stablehlo.compare EQ, %1#4, %2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<i1>) -> tensor<1xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %6 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<1xi1>) -> tensor<3xi1>
    %7 = stablehlo.select %6, %1#1, %5 : tensor<3xi1>, tensor<3xf32>
    %8 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst_0 = stablehlo.constant dense<(0x7FC00000,0x7FC00000)> : tensor<complex<f32>>
    %9 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<complex<f32>>) -> tensor<3x3xcomplex<f32>>
    %10 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %11 = stablehlo.select %10, %1#3, %9 : tensor<3x3xi1>, tensor<3x3xcomplex<f32>>
    %12 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst_1 = stablehlo.constant dense<(0x7FC00000,0x7FC00000)> : tensor<complex<f32>>
    %13 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<complex<f32>>) -> tensor<3x4xcomplex<f32>>
    %14 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<3x4xi1>
    %15 = stablehlo.select %14, %1#2, %13 : tensor<3x4xi1>, tensor<3x4xcomplex<f32>>
    %16 = stablehlo.broadcast_in_dim %7, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %17 = stablehlo.convert %16 : (tensor<1x3xf32>) -> tensor<1x3xcomplex<f32>>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 1] : (tensor<1x3xcomplex<f32>>) -> tensor<3x3xcomplex<f32>>
    %19 = stablehlo.multiply %11, %18 : tensor<3x3xcomplex<f32>>
    %20 = stablehlo.dot_general %19, %15, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<3x3xcomplex<f32>>, tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
    %21 = stablehlo.real %20 : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
    %22 = stablehlo.imag %20 : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xf32>
    %23 = stablehlo.broadcast_in_dim %21, dims = [0, 1] : (tensor<3x4xf32>) -> tensor<3x4x1xf32>
    %24 = stablehlo.broadcast_in_dim %22, dims = [0, 1] : (tensor<3x4xf32>) -> tensor<3x4x1xf32>
    %25 = stablehlo.concatenate %23, %24, dim = 2 : (tensor<3x4x1xf32>, tensor<3x4x1xf32>) -> tensor<3x4x2xf32>
    return %25, %7 : tensor<3x4x2xf32>, tensor<3xf32>
  }
}
