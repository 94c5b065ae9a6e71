module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xcomplex<f64>>) -> (tensor<2x4x2x2xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %1 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %3 = stablehlo.add %0, %2 : tensor<4x4xi64>
    %4 = stablehlo.compare EQ, %3, %1, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %5 = stablehlo.convert %4 : (tensor<4x4xi1>) -> tensor<4x4xcomplex<f64>>
    %cst = stablehlo.constant dense<(4.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %7 = stablehlo.multiply %6, %5 : tensor<4x4xcomplex<f64>>
    %8 = stablehlo.broadcast_in_dim %7, dims = [1, 2] : (tensor<4x4xcomplex<f64>>) -> tensor<1x4x4xcomplex<f64>>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<1x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %10 = stablehlo.add %arg0, %9 : tensor<2x4x4xcomplex<f64>>
    %11 = stablehlo.slice %arg0 [0:2, 0:4, 0:2] : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x2xcomplex<f64>>
    %12 = call @_solve_triangular(%10, %11) : (tensor<2x4x4xcomplex<f64>>, tensor<2x4x2xcomplex<f64>>) -> tensor<2x4x2xcomplex<f64>>
    %13 = stablehlo.real %12 : (tensor<2x4x2xcomplex<f64>>) -> tensor<2x4x2xf64>
    %14 = stablehlo.imag %12 : (tensor<2x4x2xcomplex<f64>>) -> tensor<2x4x2xf64>
    %15 = stablehlo.broadcast_in_dim %13, dims = [0, 1, 2] : (tensor<2x4x2xf64>) -> tensor<2x4x2x1xf64>
    %16 = stablehlo.broadcast_in_dim %14, dims = [0, 1, 2] : (tensor<2x4x2xf64>) -> tensor<2x4x2x1xf64>
    %17 = stablehlo.concatenate %15, %16, dim = 3 : (tensor<2x4x2x1xf64>, tensor<2x4x2x1xf64>) -> tensor<2x4x2x2xf64>
    return %17 : tensor<2x4x2x2xf64>
  }
  func.func private @_solve_triangular(%arg0: tensor<2x4x4xcomplex<f64>>, %arg1: tensor<2x4x2xcomplex<f64>>) -> tensor<2x4x2xcomplex<f64>> {
    %0 = "stablehlo.triangular_solve"(%arg0, %arg1) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<2x4x4xcomplex<f64>>, tensor<2x4x2xcomplex<f64>>) -> tensor<2x4x2xcomplex<f64>>
    return %0 : tensor<2x4x2xcomplex<f64>>
  }
}
