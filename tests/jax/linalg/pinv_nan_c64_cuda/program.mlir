module @jit_pinv attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = call @_pinv(%arg0) : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    return %0 : tensor<4x4xcomplex<f32>>
  }
  func.func private @_pinv(%arg0: tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>> {
    %0 = stablehlo.real %arg0 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %1 = stablehlo.imag %arg0 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %2 = stablehlo.negate %1 : tensor<4x4xf32>
    %3 = stablehlo.complex %0, %2 : tensor<4x4xcomplex<f32>>
    %cst = stablehlo.constant dense<4.000000e+01> : tensor<f32>
    %cst_0 = stablehlo.constant dense<1.1920929E-7> : tensor<f32>
    %4 = stablehlo.multiply %cst, %cst_0 : tensor<f32>
    %5:3 = call @svd(%3) : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<4xf32>, tensor<4x4xcomplex<f32>>)
    %6 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %7 = stablehlo.slice %5#1 [0:1] : (tensor<4xf32>) -> tensor<1xf32>
    %8 = stablehlo.multiply %6, %7 : tensor<1xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0] : (tensor<1xf32>) -> tensor<4xf32>
    %10 = stablehlo.compare GT, %5#1, %9, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %cst_1 = stablehlo.constant dense<0x7FF0000000000000> : tensor<f64>
    %11 = call @_where(%10, %5#1, %cst_1) : (tensor<4xi1>, tensor<4xf32>, tensor<f64>) -> tensor<4xf32>
    %12 = stablehlo.convert %11 : (tensor<4xf32>) -> tensor<4xcomplex<f32>>
    %13 = stablehlo.transpose %5#2, dims = [1, 0] : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %14 = stablehlo.transpose %5#0, dims = [1, 0] : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %15 = stablehlo.broadcast_in_dim %12, dims = [0] : (tensor<4xcomplex<f32>>) -> tensor<4x1xcomplex<f32>>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1] : (tensor<4x1xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %17 = stablehlo.divide %14, %16 : tensor<4x4xcomplex<f32>>
    %18 = stablehlo.dot_general %13, %17, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    return %18 : tensor<4x4xcomplex<f32>>
  }
  func.func private @svd(%arg0: tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<4xf32>, tensor<4x4xcomplex<f32>>) {
    %0:5 = stablehlo.custom_call @cusolver_gesvdj_ffi(%arg0) {backend_config = "", mhlo.backend_config = {compute_uv = true, full_matrices = true}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m], [n, o], [p, q], []) {i=4, j=4, k=4, l=4, m=4, n=4, o=4, p=4, q=4}, custom>} : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<4xf32>, tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>, tensor<i32>)
    %1 = stablehlo.transpose %0#3, dims = [1, 0] : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %2 = stablehlo.real %1 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %3 = stablehlo.imag %1 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %4 = stablehlo.negate %3 : tensor<4x4xf32>
    %5 = stablehlo.complex %2, %4 : tensor<4x4xcomplex<f32>>
    %6 = stablehlo.slice %0#2 [0:4, 0:4] : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %7 = stablehlo.slice %5 [0:4, 0:4] : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %8 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %9 = stablehlo.compare EQ, %0#4, %8, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<i1>) -> tensor<1xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %12 = stablehlo.broadcast_in_dim %10, dims = [0] : (tensor<1xi1>) -> tensor<4xi1>
    %13 = stablehlo.select %12, %0#1, %11 : tensor<4xi1>, tensor<4xf32>
    %14 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst_0 = stablehlo.constant dense<(0x7FC00000,0x7FC00000)> : tensor<complex<f32>>
    %15 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<complex<f32>>) -> tensor<4x4xcomplex<f32>>
    %16 = stablehlo.broadcast_in_dim %14, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x4xi1>
    %17 = stablehlo.select %16, %6, %15 : tensor<4x4xi1>, tensor<4x4xcomplex<f32>>
    %18 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst_1 = stablehlo.constant dense<(0x7FC00000,0x7FC00000)> : tensor<complex<f32>>
    %19 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<complex<f32>>) -> tensor<4x4xcomplex<f32>>
    %20 = stablehlo.broadcast_in_dim %18, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x4xi1>
    %21 = stablehlo.select %20, %7, %19 : tensor<4x4xi1>, tensor<4x4xcomplex<f32>>
    return %17, %13, %21 : tensor<4x4xcomplex<f32>>, tensor<4xf32>, tensor<4x4xcomplex<f32>>
  }
  func.func private @_where(%arg0: tensor<4xi1>, %arg1: tensor<4xf32>, %arg2: tensor<f64>) -> tensor<4xf32> {
    %0 = stablehlo.convert %arg2 : (tensor<f64>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<4xi1>, tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}
