module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f32>>) -> (tensor<3xcomplex<f32>> {jax.result_info = "result[0]"}, tensor<1xf32> {jax.result_info = "result[1]"}, tensor<i64> {jax.result_info = "result[2]"}, tensor<3xf32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.slice %arg0 [0:4, 0:3] : (tensor<4x4xcomplex<f32>>) -> tensor<4x3xcomplex<f32>>
    %1 = stablehlo.slice %arg0 [0:4, 3:4] : (tensor<4x4xcomplex<f32>>) -> tensor<4x1xcomplex<f32>>
    %2 = stablehlo.reshape %1 : (tensor<4x1xcomplex<f32>>) -> tensor<4xcomplex<f32>>
    %3:4 = call @_lstsq(%0, %2) : (tensor<4x3xcomplex<f32>>, tensor<4xcomplex<f32>>) -> (tensor<3xcomplex<f32>>, tensor<1xf32>, tensor<i64>, tensor<3xf32>)
    return %3#0, %3#1, %3#2, %3#3 : tensor<3xcomplex<f32>>, tensor<1xf32>, tensor<i64>, tensor<3xf32>
  }
  func.func private @_lstsq(%arg0: tensor<4x3xcomplex<f32>>, %arg1: tensor<4xcomplex<f32>>) -> (tensor<3xcomplex<f32>>, tensor<1xf32>, tensor<i64>, tensor<3xf32>) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<4xcomplex<f32>>) -> tensor<4x1xcomplex<f32>>
    %1:3 = call @svd(%arg0) : (tensor<4x3xcomplex<f32>>) -> (tensor<4x3xcomplex<f32>>, tensor<3xf32>, tensor<3x3xcomplex<f32>>)
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %3 = stablehlo.compare GT, %1#1, %2, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %4 = stablehlo.slice %1#1 [0:1] : (tensor<3xf32>) -> tensor<1xf32>
    %5 = stablehlo.reshape %4 : (tensor<1xf32>) -> tensor<f32>
    %cst_0 = stablehlo.constant dense<4.76837158E-7> : tensor<f32>
    %6 = stablehlo.multiply %cst_0, %5 : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %8 = stablehlo.compare GE, %1#1, %7, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %9 = stablehlo.and %3, %8 : tensor<3xi1>
    %10 = stablehlo.convert %9 : (tensor<3xi1>) -> tensor<3xi32>
    %11 = stablehlo.convert %10 : (tensor<3xi32>) -> tensor<3xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %12 = stablehlo.reduce(%11 init: %c) applies stablehlo.add across dimensions = [0] : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
    %c_1 = stablehlo.constant dense<1> : tensor<i64>
    %13 = call @_where(%9, %1#1, %c_1) : (tensor<3xi1>, tensor<3xf32>, tensor<i64>) -> tensor<3xf32>
    %14 = stablehlo.convert %13 : (tensor<3xf32>) -> tensor<3xcomplex<f32>>
    %cst_2 = stablehlo.constant dense<(1.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %15 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<complex<f32>>) -> tensor<3xcomplex<f32>>
    %16 = stablehlo.divide %15, %14 : tensor<3xcomplex<f32>>
    %c_3 = stablehlo.constant dense<0> : tensor<i64>
    %17 = call @_where_0(%9, %16, %c_3) : (tensor<3xi1>, tensor<3xcomplex<f32>>, tensor<i64>) -> tensor<3xcomplex<f32>>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0] : (tensor<3xcomplex<f32>>) -> tensor<3x1xcomplex<f32>>
    %19 = stablehlo.real %1#0 : (tensor<4x3xcomplex<f32>>) -> tensor<4x3xf32>
    %20 = stablehlo.imag %1#0 : (tensor<4x3xcomplex<f32>>) -> tensor<4x3xf32>
    %21 = stablehlo.negate %20 : tensor<4x3xf32>
    %22 = stablehlo.complex %19, %21 : tensor<4x3xcomplex<f32>>
    %23 = stablehlo.transpose %22, dims = [1, 0] : (tensor<4x3xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
    %24 = stablehlo.dot_general %23, %0, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<3x4xcomplex<f32>>, tensor<4x1xcomplex<f32>>) -> tensor<3x1xcomplex<f32>>
    %25 = stablehlo.real %1#2 : (tensor<3x3xcomplex<f32>>) -> tensor<3x3xf32>
    %26 = stablehlo.imag %1#2 : (tensor<3x3xcomplex<f32>>) -> tensor<3x3xf32>
    %27 = stablehlo.negate %26 : tensor<3x3xf32>
    %28 = stablehlo.complex %25, %27 : tensor<3x3xcomplex<f32>>
    %29 = stablehlo.transpose %28, dims = [1, 0] : (tensor<3x3xcomplex<f32>>) -> tensor<3x3xcomplex<f32>>
    %30 = stablehlo.multiply %18, %24 : tensor<3x1xcomplex<f32>>
    %31 = stablehlo.dot_general %29, %30, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<3x3xcomplex<f32>>, tensor<3x1xcomplex<f32>>) -> tensor<3x1xcomplex<f32>>
    %32 = stablehlo.dot_general %arg0, %31, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x3xcomplex<f32>>, tensor<3x1xcomplex<f32>>) -> tensor<4x1xcomplex<f32>>
    %33 = stablehlo.subtract %0, %32 : tensor<4x1xcomplex<f32>>
    %34 = call @norm(%33) : (tensor<4x1xcomplex<f32>>) -> tensor<1xf32>
    %35 = stablehlo.multiply %34, %34 : tensor<1xf32>
    %36 = stablehlo.reshape %31 : (tensor<3x1xcomplex<f32>>) -> tensor<3xcomplex<f32>>
    return %36, %35, %12, %1#1 : tensor<3xcomplex<f32>>, tensor<1xf32>, tensor<i64>, tensor<3xf32>
  }
  func.func private @svd(%arg0: tensor<4x3xcomplex<f32>>) -> (tensor<4x3xcomplex<f32>>, tensor<3xf32>, tensor<3x3xcomplex<f32>>) {
    %0:5 = stablehlo.custom_call @lapack_cgesdd_ffi(%arg0) {backend_config = "", mhlo.backend_config = {mode = 83 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m], [n, o], [p, q], []) {i=4, j=3, k=4, l=3, m=3, n=4, o=3, p=3, q=3}, custom>} : (tensor<4x3xcomplex<f32>>) -> (tensor<4x3xcomplex<f32>>, tensor<3xf32>, tensor<4x3xcomplex<f32>>, tensor<3x3xcomplex<f32>>, tensor<i32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %2 = stablehlo.compare EQ, %0#4, %1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i1>) -> tensor<1xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %5 = stablehlo.broadcast_in_dim %3, dims = [0] : (tensor<1xi1>) -> tensor<3xi1>
    %6 = stablehlo.select %5, %0#1, %4 : tensor<3xi1>, tensor<3xf32>
    %7 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst_0 = stablehlo.constant dense<(0x7FC00000,0x7FC00000)> : tensor<complex<f32>>
    %8 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<complex<f32>>) -> tensor<4x3xcomplex<f32>>
    %9 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x3xi1>
    %10 = stablehlo.select %9, %0#2, %8 : tensor<4x3xi1>, tensor<4x3xcomplex<f32>>
    %11 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst_1 = stablehlo.constant dense<(0x7FC00000,0x7FC00000)> : tensor<complex<f32>>
    %12 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<complex<f32>>) -> tensor<3x3xcomplex<f32>>
    %13 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<3x3xi1>
    %14 = stablehlo.select %13, %0#3, %12 : tensor<3x3xi1>, tensor<3x3xcomplex<f32>>
    return %10, %6, %14 : tensor<4x3xcomplex<f32>>, tensor<3xf32>, tensor<3x3xcomplex<f32>>
  }
  func.func private @_where(%arg0: tensor<3xi1>, %arg1: tensor<3xf32>, %arg2: tensor<i64>) -> tensor<3xf32> {
    %0 = stablehlo.convert %arg2 : (tensor<i64>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<3xi1>, tensor<3xf32>
    return %2 : tensor<3xf32>
  }
  func.func private @_where_0(%arg0: tensor<3xi1>, %arg1: tensor<3xcomplex<f32>>, %arg2: tensor<i64>) -> tensor<3xcomplex<f32>> {
    %0 = stablehlo.convert %arg2 : (tensor<i64>) -> tensor<complex<f32>>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<complex<f32>>) -> tensor<3xcomplex<f32>>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<3xi1>, tensor<3xcomplex<f32>>
    return %2 : tensor<3xcomplex<f32>>
  }
  func.func private @norm(%arg0: tensor<4x1xcomplex<f32>>) -> tensor<1xf32> {
    %0 = stablehlo.real %arg0 : (tensor<4x1xcomplex<f32>>) -> tensor<4x1xf32>
    %1 = stablehlo.imag %arg0 : (tensor<4x1xcomplex<f32>>) -> tensor<4x1xf32>
    %2 = stablehlo.negate %1 : tensor<4x1xf32>
    %3 = stablehlo.complex %0, %2 : tensor<4x1xcomplex<f32>>
    %4 = stablehlo.multiply %arg0, %3 : tensor<4x1xcomplex<f32>>
    %5 = stablehlo.real %4 : (tensor<4x1xcomplex<f32>>) -> tensor<4x1xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x1xf32>, tensor<f32>) -> tensor<1xf32>
    %7 = stablehlo.sqrt %6 : tensor<1xf32>
    return %7 : tensor<1xf32>
  }
}
