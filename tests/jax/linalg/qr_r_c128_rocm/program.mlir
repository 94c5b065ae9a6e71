module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xcomplex<f64>>) -> (tensor<2x4x4xf64> {jax.result_info = "result"}) {
    %0 = call @qr(%arg0) : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %1 = stablehlo.abs %0 : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xf64>
    return %1 : tensor<2x4x4xf64>
  }
  func.func private @qr(%arg0: tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>> {
    %0:2 = stablehlo.custom_call @hipsolver_geqrf_ffi(%arg0) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n]) {i=2, j=4, k=4, l=4, m=4, n=4}, custom>} : (tensor<2x4x4xcomplex<f64>>) -> (tensor<2x4x4xcomplex<f64>>, tensor<2x4xcomplex<f64>>)
    %1 = stablehlo.custom_call @hipsolver_orgqr_ffi(%0#0, %0#1) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k], [i, l])->([i, m, n]) {i=2, j=4, k=4, l=4, m=4, n=4}, custom>} : (tensor<2x4x4xcomplex<f64>>, tensor<2x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %2 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %c = stablehlo.constant dense<-1> : tensor<i64>
    %3 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %4 = stablehlo.add %2, %3 : tensor<4x4xi64>
    %5 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %6 = stablehlo.compare GE, %4, %5, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %7 = stablehlo.broadcast_in_dim %6, dims = [1, 2] : (tensor<4x4xi1>) -> tensor<2x4x4xi1>
    %cst = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %8 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %9 = stablehlo.select %7, %8, %0#0 : tensor<2x4x4xi1>, tensor<2x4x4xcomplex<f64>>
    return %9 : tensor<2x4x4xcomplex<f64>>
  }
}
