module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f64>>) -> (tensor<4x3x2xf64> {jax.result_info = "result[0]"}, tensor<4x4x2xf64> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.slice %arg0 [0:4, 0:3] : (tensor<4x4xcomplex<f64>>) -> tensor<4x3xcomplex<f64>>
    %1:2 = call @qr(%0) : (tensor<4x3xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4x3xcomplex<f64>>)
    %2 = stablehlo.dot_general %1#0, %1#1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x4xcomplex<f64>>, tensor<4x3xcomplex<f64>>) -> tensor<4x3xcomplex<f64>>
    %3 = stablehlo.transpose %1#0, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %4 = stablehlo.real %3 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %5 = stablehlo.imag %3 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %6 = stablehlo.negate %5 : tensor<4x4xf64>
    %7 = stablehlo.complex %4, %6 : tensor<4x4xcomplex<f64>>
    %8 = stablehlo.dot_general %7, %1#0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %9 = stablehlo.real %2 : (tensor<4x3xcomplex<f64>>) -> tensor<4x3xf64>
    %10 = stablehlo.imag %2 : (tensor<4x3xcomplex<f64>>) -> tensor<4x3xf64>
    %11 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<4x3xf64>) -> tensor<4x3x1xf64>
    %12 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<4x3xf64>) -> tensor<4x3x1xf64>
    %13 = stablehlo.concatenate %11, %12, dim = 2 : (tensor<4x3x1xf64>, tensor<4x3x1xf64>) -> tensor<4x3x2xf64>
    %14 = stablehlo.real %8 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %15 = stablehlo.imag %8 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %16 = stablehlo.broadcast_in_dim %14, dims = [0, 1] : (tensor<4x4xf64>) -> tensor<4x4x1xf64>
    %17 = stablehlo.broadcast_in_dim %15, dims = [0, 1] : (tensor<4x4xf64>) -> tensor<4x4x1xf64>
    %18 = stablehlo.concatenate %16, %17, dim = 2 : (tensor<4x4x1xf64>, tensor<4x4x1xf64>) -> tensor<4x4x2xf64>
    return %13, %18 : tensor<4x3x2xf64>, tensor<4x4x2xf64>
  }
  func.func private @qr(%arg0: tensor<4x3xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4x3xcomplex<f64>>) {
    %0:2 = stablehlo.custom_call @lapack_zgeqrf_ffi(%arg0) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m]) {i=4, j=3, k=4, l=3, m=3}, custom>} : (tensor<4x3xcomplex<f64>>) -> (tensor<4x3xcomplex<f64>>, tensor<3xcomplex<f64>>)
    %cst = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %1 = stablehlo.pad %0#0, %cst, low = [0, 0], high = [0, 1], interior = [0, 0] : (tensor<4x3xcomplex<f64>>, tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %2 = stablehlo.custom_call @lapack_zungqr_ffi(%1, %0#1) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k])->([l, m]) {i=4, j=4, k=3, l=4, m=4}, custom>} : (tensor<4x4xcomplex<f64>>, tensor<3xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %3 = stablehlo.iota dim = 0 : tensor<4x3xi64>
    %c = stablehlo.constant dense<-1> : tensor<i64>
    %4 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4x3xi64>
    %5 = stablehlo.add %3, %4 : tensor<4x3xi64>
    %6 = stablehlo.iota dim = 1 : tensor<4x3xi64>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<4x3xi64>, tensor<4x3xi64>) -> tensor<4x3xi1>
    %cst_0 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %8 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<complex<f64>>) -> tensor<4x3xcomplex<f64>>
    %9 = stablehlo.select %7, %8, %0#0 : tensor<4x3xi1>, tensor<4x3xcomplex<f64>>
    return %2, %9 : tensor<4x4xcomplex<f64>>, tensor<4x3xcomplex<f64>>
  }
}
