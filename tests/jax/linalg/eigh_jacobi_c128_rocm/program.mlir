module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xcomplex<f64>>) -> (tensor<2x4xf64> {jax.result_info = "result[0]"}, tensor<2x4x4x2xf64> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.transpose %arg0, dims = [0, 2, 1] : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %1 = stablehlo.real %0 : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xf64>
    %2 = stablehlo.imag %0 : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xf64>
    %3 = stablehlo.negate %2 : tensor<2x4x4xf64>
    %4 = stablehlo.complex %1, %3 : tensor<2x4x4xcomplex<f64>>
    %5 = stablehlo.add %arg0, %4 : tensor<2x4x4xcomplex<f64>>
    %cst = stablehlo.constant dense<(2.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %7 = stablehlo.divide %5, %6 : tensor<2x4x4xcomplex<f64>>
    %8 = stablehlo.transpose %7, dims = [0, 2, 1] : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %9 = stablehlo.real %8 : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xf64>
    %10 = stablehlo.imag %8 : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xf64>
    %11 = stablehlo.negate %10 : tensor<2x4x4xf64>
    %12 = stablehlo.complex %9, %11 : tensor<2x4x4xcomplex<f64>>
    %13 = stablehlo.add %7, %12 : tensor<2x4x4xcomplex<f64>>
    %cst_0 = stablehlo.constant dense<(2.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %14 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<complex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %15 = stablehlo.divide %13, %14 : tensor<2x4x4xcomplex<f64>>
    %16:3 = stablehlo.custom_call @hipsolver_syevd_ffi(%15) {backend_config = "", mhlo.backend_config = {algorithm = 2 : ui8, lower = true}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n], [i]) {i=2, j=4, k=4, l=4, m=4, n=4}, custom>} : (tensor<2x4x4xcomplex<f64>>) -> (tensor<2x4x4xcomplex<f64>>, tensor<2x4xf64>, tensor<2xi32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %17 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %18 = stablehlo.compare EQ, %16#2, %17, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0] : (tensor<2xi1>) -> tensor<2x1x1xi1>
    %cst_1 = stablehlo.constant dense<(0x7FF8000000000000,0x7FF8000000000000)> : tensor<complex<f64>>
    %20 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<complex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %21 = stablehlo.broadcast_in_dim %19, dims = [0, 1, 2] : (tensor<2x1x1xi1>) -> tensor<2x4x4xi1>
    %22 = stablehlo.select %21, %16#0, %20 : tensor<2x4x4xi1>, tensor<2x4x4xcomplex<f64>>
    %23 = stablehlo.broadcast_in_dim %18, dims = [0] : (tensor<2xi1>) -> tensor<2x1xi1>
    %cst_2 = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
    %24 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f64>) -> tensor<2x4xf64>
    %25 = stablehlo.broadcast_in_dim %23, dims = [0, 1] : (tensor<2x1xi1>) -> tensor<2x4xi1>
    %26 = stablehlo.select %25, %16#1, %24 : tensor<2x4xi1>, tensor<2x4xf64>
    %27 = stablehlo.broadcast_in_dim %26, dims = [0, 2] : (tensor<2x4xf64>) -> tensor<2x1x4xf64>
    %28 = stablehlo.convert %27 : (tensor<2x1x4xf64>) -> tensor<2x1x4xcomplex<f64>>
    %29 = stablehlo.broadcast_in_dim %28, dims = [0, 1, 2] : (tensor<2x1x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %30 = stablehlo.multiply %22, %29 : tensor<2x4x4xcomplex<f64>>
    %31 = stablehlo.transpose %22, dims = [0, 2, 1] : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %32 = stablehlo.real %31 : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xf64>
    %33 = stablehlo.imag %31 : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xf64>
    %34 = stablehlo.negate %33 : tensor<2x4x4xf64>
    %35 = stablehlo.complex %32, %34 : tensor<2x4x4xcomplex<f64>>
    %36 = stablehlo.dot_general %30, %35, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x4x4xcomplex<f64>>, tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xcomplex<f64>>
    %37 = stablehlo.real %36 : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xf64>
    %38 = stablehlo.imag %36 : (tensor<2x4x4xcomplex<f64>>) -> tensor<2x4x4xf64>
    %39 = stablehlo.broadcast_in_dim %37, dims = [0, 1, 2] : (tensor<2x4x4xf64>) -> tensor<2x4x4x1xf64>
    %40 = stablehlo.broadcast_in_dim %38, dims = [0, 1, 2] : (tensor<2x4x4xf64>) -> tensor<2x4x4x1xf64>
    %41 = stablehlo.concatenate %39, %40, dim = 3 : (tensor<2x4x4x1xf64>, tensor<2x4x4x1xf64>) -> tensor<2x4x4x2xf64>
    return %26, %41 : tensor<2x4xf64>, tensor<2x4x4x2xf64>
  }
}
