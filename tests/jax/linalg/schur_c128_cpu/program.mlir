module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f64>>) -> (tensor<4x4x2xf64> {jax.result_info = "result[0]"}, tensor<4x2xf64> {jax.result_info = "result[1]"}) {
    %0:2 = call @_schur(%arg0) : (tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>)
    %1 = stablehlo.dot_general %0#1, %0#0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %2 = stablehlo.transpose %0#1, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %3 = stablehlo.real %2 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %4 = stablehlo.imag %2 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %5 = stablehlo.negate %4 : tensor<4x4xf64>
    %6 = stablehlo.complex %3, %5 : tensor<4x4xcomplex<f64>>
    %7 = stablehlo.dot_general %1, %6, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %8 = call @diagonal(%0#0) : (tensor<4x4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
    %9 = call @sort_complex(%8) : (tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
    %10 = stablehlo.real %7 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %11 = stablehlo.imag %7 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %12 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<4x4xf64>) -> tensor<4x4x1xf64>
    %13 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<4x4xf64>) -> tensor<4x4x1xf64>
    %14 = stablehlo.concatenate %12, %13, dim = 2 : (tensor<4x4x1xf64>, tensor<4x4x1xf64>) -> tensor<4x4x2xf64>
    %15 = stablehlo.real %9 : (tensor<4xcomplex<f64>>) -> tensor<4xf64>
    %16 = stablehlo.imag %9 : (tensor<4xcomplex<f64>>) -> tensor<4xf64>
    %17 = stablehlo.broadcast_in_dim %15, dims = [0] : (tensor<4xf64>) -> tensor<4x1xf64>
    %18 = stablehlo.broadcast_in_dim %16, dims = [0] : (tensor<4xf64>) -> tensor<4x1xf64>
    %19 = stablehlo.concatenate %17, %18, dim = 1 : (tensor<4x1xf64>, tensor<4x1xf64>) -> tensor<4x2xf64>
    return %14, %19 : tensor<4x4x2xf64>, tensor<4x2xf64>
  }
  func.func private @_schur(%arg0: tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) {
    %0:5 = stablehlo.custom_call @lapack_zgees_ffi(%arg0) {backend_config = "", mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m, n], [o], [], []) {i=4, j=4, k=4, l=4, m=4, n=4, o=4}, custom>} : (tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<i32>, tensor<i32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %2 = stablehlo.compare EQ, %0#4, %1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst = stablehlo.constant dense<(0x7FF8000000000000,0x7FF8000000000000)> : tensor<complex<f64>>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %5 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x4xi1>
    %6 = stablehlo.select %5, %0#0, %4 : tensor<4x4xi1>, tensor<4x4xcomplex<f64>>
    %7 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst_0 = stablehlo.constant dense<(0x7FF8000000000000,0x7FF8000000000000)> : tensor<complex<f64>>
    %8 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %9 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x4xi1>
    %10 = stablehlo.select %9, %0#1, %8 : tensor<4x4xi1>, tensor<4x4xcomplex<f64>>
    return %6, %10 : tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>
  }
  func.func private @diagonal(%arg0: tensor<4x4xcomplex<f64>>) -> tensor<4xcomplex<f64>> {
    %0 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %1 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %3 = stablehlo.add %0, %2 : tensor<4x4xi64>
    %4 = stablehlo.compare EQ, %3, %1, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %5 = stablehlo.convert %4 : (tensor<4x4xi1>) -> tensor<4x4xcomplex<f64>>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %6 = "stablehlo.case"(%c_0) ({
      %c_1 = stablehlo.constant dense<0> : tensor<i32>
      stablehlo.return %c_1 : tensor<i32>
    }, {
      %c_1 = stablehlo.constant dense<0> : tensor<i32>
      stablehlo.return %c_1 : tensor<i32>
    }) : (tensor<i32>) -> tensor<i32>
    %7 = "stablehlo.case"(%6) ({
      %8 = stablehlo.iota dim = 0 : tensor<4xi64>
      %9 = stablehlo.iota dim = 0 : tensor<4xi64>
      %c_1 = stablehlo.constant dense<0> : tensor<i64>
      %10 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i64>) -> tensor<4xi64>
      %11 = stablehlo.compare LT, %8, %10, SIGNED : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
      %c_2 = stablehlo.constant dense<4> : tensor<i64>
      %12 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i64>) -> tensor<4xi64>
      %13 = stablehlo.add %8, %12 : tensor<4xi64>
      %14 = stablehlo.select %11, %13, %8 : tensor<4xi1>, tensor<4xi64>
      %c_3 = stablehlo.constant dense<0> : tensor<i64>
      %15 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i64>) -> tensor<4xi64>
      %16 = stablehlo.compare LT, %9, %15, SIGNED : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
      %c_4 = stablehlo.constant dense<4> : tensor<i64>
      %17 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i64>) -> tensor<4xi64>
      %18 = stablehlo.add %9, %17 : tensor<4xi64>
      %19 = stablehlo.select %16, %18, %9 : tensor<4xi1>, tensor<4xi64>
      %20 = stablehlo.convert %14 : (tensor<4xi64>) -> tensor<4xi32>
      %21 = stablehlo.convert %19 : (tensor<4xi64>) -> tensor<4xi32>
      %22 = stablehlo.broadcast_in_dim %20, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
      %23 = stablehlo.broadcast_in_dim %21, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
      %24 = stablehlo.concatenate %22, %23, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
      %25 = "stablehlo.gather"(%arg0, %24) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<4x4xcomplex<f64>>, tensor<4x2xi32>) -> tensor<4xcomplex<f64>>
      stablehlo.return %25 : tensor<4xcomplex<f64>>
    }) : (tensor<i32>) -> tensor<4xcomplex<f64>>
    return %7 : tensor<4xcomplex<f64>>
  }
  func.func private @sort_complex(%arg0: tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>> {
    %0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<complex<f64>>, %arg2: tensor<complex<f64>>):
      %1 = stablehlo.real %arg1 : (tensor<complex<f64>>) -> tensor<f64>
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %2 = stablehlo.compare EQ, %1, %cst, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %3 = stablehlo.select %2, %cst_0, %1 : tensor<i1>, tensor<f64>
      %4 = stablehlo.compare NE, %1, %1, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
      %5 = stablehlo.select %4, %cst_1, %3 : tensor<i1>, tensor<f64>
      %6 = stablehlo.imag %arg1 : (tensor<complex<f64>>) -> tensor<f64>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %7 = stablehlo.compare EQ, %6, %cst_2, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %8 = stablehlo.select %7, %cst_3, %6 : tensor<i1>, tensor<f64>
      %9 = stablehlo.compare NE, %6, %6, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
      %10 = stablehlo.select %9, %cst_4, %8 : tensor<i1>, tensor<f64>
      %11 = stablehlo.real %arg2 : (tensor<complex<f64>>) -> tensor<f64>
      %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %12 = stablehlo.compare EQ, %11, %cst_5, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %13 = stablehlo.select %12, %cst_6, %11 : tensor<i1>, tensor<f64>
      %14 = stablehlo.compare NE, %11, %11, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_7 = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
      %15 = stablehlo.select %14, %cst_7, %13 : tensor<i1>, tensor<f64>
      %16 = stablehlo.imag %arg2 : (tensor<complex<f64>>) -> tensor<f64>
      %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %17 = stablehlo.compare EQ, %16, %cst_8, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %18 = stablehlo.select %17, %cst_9, %16 : tensor<i1>, tensor<f64>
      %19 = stablehlo.compare NE, %16, %16, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cst_10 = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
      %20 = stablehlo.select %19, %cst_10, %18 : tensor<i1>, tensor<f64>
      %21 = stablehlo.compare LT, %10, %20, TOTALORDER : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %22 = stablehlo.compare LT, %5, %15, TOTALORDER : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %23 = stablehlo.compare EQ, %5, %15, TOTALORDER : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %24 = stablehlo.and %23, %21 : tensor<i1>
      %25 = stablehlo.or %22, %24 : tensor<i1>
      stablehlo.return %25 : tensor<i1>
    }) : (tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>>
    return %0 : tensor<4xcomplex<f64>>
  }
}
