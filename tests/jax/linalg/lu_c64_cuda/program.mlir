module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f32>>) -> (tensor<4x4xf32> {jax.result_info = "result[0]"}, tensor<4x4x2xf32> {jax.result_info = "result[1]"}, tensor<4x4x2xf32> {jax.result_info = "result[2]"}) {
    %0:3 = call @lu(%arg0) : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xf32>, tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>)
    %1 = stablehlo.real %0#1 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %2 = stablehlo.imag %0#1 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<4x4xf32>) -> tensor<4x4x1xf32>
    %4 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<4x4xf32>) -> tensor<4x4x1xf32>
    %5 = stablehlo.concatenate %3, %4, dim = 2 : (tensor<4x4x1xf32>, tensor<4x4x1xf32>) -> tensor<4x4x2xf32>
    %6 = stablehlo.real %0#2 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %7 = stablehlo.imag %0#2 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %8 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<4x4xf32>) -> tensor<4x4x1xf32>
    %9 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<4x4xf32>) -> tensor<4x4x1xf32>
    %10 = stablehlo.concatenate %8, %9, dim = 2 : (tensor<4x4x1xf32>, tensor<4x4x1xf32>) -> tensor<4x4x2xf32>
    return %0#0, %5, %10 : tensor<4x4xf32>, tensor<4x4x2xf32>, tensor<4x4x2xf32>
  }
  func.func private @lu(%arg0: tensor<4x4xcomplex<f32>>) -> (tensor<4x4xf32>, tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>) {
    %0:3 = call @_lu(%arg0) : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xf32>, tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>)
    return %0#0, %0#1, %0#2 : tensor<4x4xf32>, tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>
  }
  func.func private @_lu(%arg0: tensor<4x4xcomplex<f32>>) -> (tensor<4x4xf32>, tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>) {
    %0:3 = stablehlo.custom_call @cusolver_getrf_ffi(%arg0) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m], []) {i=4, j=4, k=4, l=4, m=4}, custom>} : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<4xi32>, tensor<i32>)
    %c = stablehlo.constant dense<1> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4xi32>
    %2 = stablehlo.subtract %0#1, %1 : tensor<4xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<i32>
    %4 = stablehlo.compare GE, %0#2, %3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst = stablehlo.constant dense<(0x7FC00000,0x7FC00000)> : tensor<complex<f32>>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<4x4xcomplex<f32>>
    %7 = stablehlo.broadcast_in_dim %5, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x4xi1>
    %8 = stablehlo.select %7, %0#0, %6 : tensor<4x4xi1>, tensor<4x4xcomplex<f32>>
    %9 = stablehlo.custom_call @cu_lu_pivots_to_permutation(%2) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i])->([j]) {i=4, j=4}, custom>} : (tensor<4xi32>) -> tensor<4xi32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [1] : (tensor<4xi32>) -> tensor<1x4xi32>
    %11 = stablehlo.iota dim = 0 : tensor<4xi32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
    %13 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<1x4xi32>) -> tensor<4x4xi32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<4x1xi32>) -> tensor<4x4xi32>
    %15 = stablehlo.compare EQ, %13, %14, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
    %16 = stablehlo.convert %15 : (tensor<4x4xi1>) -> tensor<4x4xcomplex<f32>>
    %17 = stablehlo.real %16 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %18 = call @tril(%8) : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %19 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %20 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %c_1 = stablehlo.constant dense<0> : tensor<i64>
    %21 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %22 = stablehlo.add %19, %21 : tensor<4x4xi64>
    %23 = stablehlo.compare EQ, %22, %20, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %24 = stablehlo.convert %23 : (tensor<4x4xi1>) -> tensor<4x4xcomplex<f32>>
    %25 = stablehlo.add %18, %24 : tensor<4x4xcomplex<f32>>
    %26 = call @triu(%8) : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    return %17, %25, %26 : tensor<4x4xf32>, tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>
  }
  func.func private @tril(%arg0: tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>> {
    %0 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %c = stablehlo.constant dense<-1> : tensor<i64>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %2 = stablehlo.add %0, %1 : tensor<4x4xi64>
    %3 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %cst = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<4x4xcomplex<f32>>
    %6 = stablehlo.select %4, %arg0, %5 : tensor<4x4xi1>, tensor<4x4xcomplex<f32>>
    return %6 : tensor<4x4xcomplex<f32>>
  }
  func.func private @triu(%arg0: tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>> {
    %0 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %c = stablehlo.constant dense<-1> : tensor<i64>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %2 = stablehlo.add %0, %1 : tensor<4x4xi64>
    %3 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %cst = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<4x4xcomplex<f32>>
    %6 = stablehlo.select %4, %5, %arg0 : tensor<4x4xi1>, tensor<4x4xcomplex<f32>>
    return %6 : tensor<4x4xcomplex<f32>>
  }
}
