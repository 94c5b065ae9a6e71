module @jit_pinv attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xcomplex<f64>>) -> (tensor<2x4x4xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = call @_pinv(%arg0) : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    return %0 : tensor<2x4x4xcomplex<f64>>
  }
  func.func private @_pinv(%arg0: tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>> {
    %0 = stablehlo.real %arg0 : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xf64>
    %1 = stablehlo.imag %arg0 : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xf64>
    %2 = stablehlo.negate %1 : tensor<2x4x4xf64>
    %3 = stablehlo.complex %0, %2 : tensor<2x4x4xcomplex<f64>>
    %cst = stablehlo.constant dense<4.000000e+01> : tensor<f64>
    %cst_0 = stablehlo.constant dense<2.2204460492503131E-16> : tensor<f64>
    %4 = stablehlo.multiply %cst, %cst_0 : tensor<f64>
    %5:3 = call @svd(%3) : (tensor<2x4x4xcomplex<f64>>) -> (tensor<2x4x4xcomplex<f64>>, tensor<2x4xf64>, tensor<2x4x4xcomplex<f64>>)
    %6 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<f64>) -> tensor<1xf64>
    %7 = stablehlo.broadcast_in_dim %6, dims = [1] : (tensor<1xf64>) -> tensor<1x1xf64>
    %8 = stablehlo.slice %5#1 [0:2, 0:1] : (tensor<2x4xf64>) -> tensor<2x1xf64>
    %9 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<1x1xf64>) -> tensor<2x1xf64>
    %10 = stablehlo.multiply %9, %8 : tensor<2x1xf64>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<2x1xf64>) -> tensor<2x4xf64>
    %12 = stablehlo.compare GT, %5#1, %11, FLOAT : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xi1>
    %cst_1 = stablehlo.constant dense<0x7FF0000000000000> : tensor<f64>
    %13 = call @_where(%12, %5#1, %cst_1) : (tensor<2x4xi1>, tensor<2x4xf64>, tensor<f64>) -> tensor<2x4xf64>
    %14 = stablehlo.convert %13 : (tensor<2x4xf64>) -> tensor<2x4xcomplex<f64>>
    %15 = stablehlo.transpose %5#2, dims = [0, 2, 1] : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %16 = stablehlo.transpose %5#0, dims = [0, 2, 1] : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %17 = stablehlo.broadcast_in_dim %14, dims = [0, 1] : (tensor<2x4xcomplex<f64>>) -> tensor<2x4x1xcomplex<f64>>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 1, 2] : (tensor<2x4x1xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %19 = stablehlo.divide %16, %18 : tensor<2x4x4xcomplex<f64>>
    %20 = stablehlo.dot_general %15, %19, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [HIGHEST, HIGHEST] : (tensor<2x4x4xcomplex<f64>>, tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    return %20 : tensor<2x4x4xcomplex<f64>>
  }
  func.func private @svd(%arg0: tensor<2x4x4xcomplex<f64>>) -> (tensor<2x4x4xcomplex<f64>>, tensor<2x4xf64>, tensor<2x4x4xcomplex<f64>>) {
    %0:5 = stablehlo.custom_call @hipsolver_gesvdj_ffi(%arg0) {backend_config = "", mhlo.backend_config = {compute_uv = true, full_matrices = true}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n], [i, o, p], [i, q, r], [i]) {i=2, j=4, k=4, l=4, m=4, n=4, o=4, p=4, q=4, r=4}, custom>} : (tensor<2x4x4xcomplex<f64>>) -> (tensor<2x4x4xcomplex<f64>>, tensor<2x4xf64>, tensor<2x4x4xcomplex<f64>>, tensor<2x4x4xcomplex<f64>>, tensor<2xi32>)
    %1 = stablehlo.transpose %0#3, dims = [0, 2, 1] : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %2 = stablehlo.real %1 : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xf64>
    %3 = stablehlo.imag %1 : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xf64>
    %4 = stablehlo.negate %3 : tensor<2x4x4xf64>
    %5 = stablehlo.complex %2, %4 : tensor<2x4x4xcomplex<f64>>
    %6 = stablehlo.slice %0#2 [0:2, 0:4, 0:4] : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %7 = stablehlo.slice %5 [0:2, 0:4, 0:4] : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %8 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %9 = stablehlo.compare EQ, %0#4, %8, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0] : (tensor<2xi1>) -> tensor<2x1xi1>
    %cst = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
    %11 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<2x4xf64>
    %12 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<2x1xi1>) -> tensor<2x4xi1>
    %13 = stablehlo.select %12, %0#1, %11 : tensor<2x4xi1>, tensor<2x4xf64>
    %14 = stablehlo.broadcast_in_dim %9, dims = [0] : (tensor<2xi1>) -> tensor<2x1x1xi1>
    %cst_0 = stablehlo.constant dense<(0x7FF8000000000000,0x7FF8000000000000)> : tensor<complex<f64>>
    %15 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<complex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %16 = stablehlo.broadcast_in_dim %14, dims = [0, 1, 2] : (tensor<2x1x1xi1>) -> tensor<2x4x4xi1>
    %17 = stablehlo.select %16, %6, %15 : tensor<2x4x4xi1>, tensor<2x4x4xcomplex<f64>>
    %18 = stablehlo.broadcast_in_dim %9, dims = [0] : (tensor<2xi1>) -> tensor<2x1x1xi1>
    %cst_1 = stablehlo.constant dense<(0x7FF8000000000000,0x7FF8000000000000)> : tensor<complex<f64>>
    %19 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<complex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %20 = stablehlo.broadcast_in_dim %18, dims = [0, 1, 2] : (tensor<2x1x1xi1>) -> tensor<2x4x4xi1>
    %21 = stablehlo.select %20, %7, %19 : tensor<2x4x4xi1>, tensor<2x4x4xcomplex<f64>>
    return %17, %13, %21 : tensor<2x4x4xcomplex<f64>>, tensor<2x4xf64>, tensor<2x4x4xcomplex<f64>>
  }
  func.func private @_where(%arg0: tensor<2x4xi1>, %arg1: tensor<2x4xf64>, %arg2: tensor<f64>) -> tensor<2x4xf64> {
    %0 = stablehlo.convert %arg2 : tensor<f64>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f64>) -> tensor<2x4xf64>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<2x4xi1>, tensor<2x4xf64>
    return %2 : tensor<2x4xf64>
  }
}
