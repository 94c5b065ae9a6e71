module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f32>>) -> (tensor<4x2x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %1 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %3 = stablehlo.add %0, %2 : tensor<4x4xi64>
    %4 = stablehlo.compare EQ, %3, %1, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %5 = stablehlo.convert %4 : (tensor<4x4xi1>) -> tensor<4x4xcomplex<f32>>
    %cst = stablehlo.constant dense<(4.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<4x4xcomplex<f32>>
    %7 = stablehlo.multiply %6, %5 : tensor<4x4xcomplex<f32>>
    %8 = stablehlo.add %arg0, %7 : tensor<4x4xcomplex<f32>>
    %9 = stablehlo.slice %arg0 [0:4, 0:2] : (tensor<4x4xcomplex<f32>>) -> tensor<4x2xcomplex<f32>>
    %10 = call @_solve_triangular(%8, %9) : (tensor<4x4xcomplex<f32>>, tensor<4x2xcomplex<f32>>) -> tensor<4x2xcomplex<f32>>
    %11 = stablehlo.real %10 : (tensor<4x2xcomplex<f32>>) -> tensor<4x2xf32>
    %12 = stablehlo.imag %10 : (tensor<4x2xcomplex<f32>>) -> tensor<4x2xf32>
    %13 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<4x2xf32>) -> tensor<4x2x1xf32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<4x2xf32>) -> tensor<4x2x1xf32>
    %15 = stablehlo.concatenate %13, %14, dim = 2 : (tensor<4x2x1xf32>, tensor<4x2x1xf32>) -> tensor<4x2x2xf32>
    return %15 : tensor<4x2x2xf32>
  }
  func.func private @_solve_triangular(%arg0: tensor<4x4xcomplex<f32>>, %arg1: tensor<4x2xcomplex<f32>>) -> tensor<4x2xcomplex<f32>> {
    %0 = "stablehlo.triangular_solve"(%arg0, %arg1) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<4x4xcomplex<f32>>, tensor<4x2xcomplex<f32>>) -> tensor<4x2xcomplex<f32>>
    return %0 : tensor<4x2xcomplex<f32>>
  }
}
