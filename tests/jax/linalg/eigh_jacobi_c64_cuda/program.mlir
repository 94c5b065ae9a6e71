module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f32>>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<4x4x2xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %1 = stablehlo.real %0 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %2 = stablehlo.imag %0 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %3 = stablehlo.negate %2 : tensor<4x4xf32>
    %4 = stablehlo.complex %1, %3 : tensor<4x4xcomplex<f32>>
    %5 = stablehlo.add %arg0, %4 : tensor<4x4xcomplex<f32>>
    %cst = stablehlo.constant dense<(2.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<4x4xcomplex<f32>>
    %7 = stablehlo.divide %5, %6 : tensor<4x4xcomplex<f32>>
    %8 = stablehlo.transpose %7, dims = [1, 0] : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %9 = stablehlo.real %8 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %10 = stablehlo.imag %8 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %11 = stablehlo.negate %10 : tensor<4x4xf32>
    %12 = stablehlo.complex %9, %11 : tensor<4x4xcomplex<f32>>
    %13 = stablehlo.add %7, %12 : tensor<4x4xcomplex<f32>>
    %cst_0 = stablehlo.constant dense<(2.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %14 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<complex<f32>>) -> tensor<4x4xcomplex<f32>>
    %15 = stablehlo.divide %13, %14 : tensor<4x4xcomplex<f32>>
    %16:3 = stablehlo.custom_call @cusolver_syevd_ffi(%15) {backend_config = "", mhlo.backend_config = {algorithm = 2 : ui8, lower = true}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m], []) {i=4, j=4, k=4, l=4, m=4}, custom>} : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<4xf32>, tensor<i32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %17 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %18 = stablehlo.compare EQ, %16#2, %17, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %19 = stablehlo.broadcast_in_dim %18, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst_1 = stablehlo.constant dense<(0x7FC00000,0x7FC00000)> : tensor<complex<f32>>
    %20 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<complex<f32>>) -> tensor<4x4xcomplex<f32>>
    %21 = stablehlo.broadcast_in_dim %19, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x4xi1>
    %22 = stablehlo.select %21, %16#0, %20 : tensor<4x4xi1>, tensor<4x4xcomplex<f32>>
    %23 = stablehlo.broadcast_in_dim %18, dims = [] : (tensor<i1>) -> tensor<1xi1>
    %cst_2 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %24 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %25 = stablehlo.broadcast_in_dim %23, dims = [0] : (tensor<1xi1>) -> tensor<4xi1>
    %26 = stablehlo.select %25, %16#1, %24 : tensor<4xi1>, tensor<4xf32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %28 = stablehlo.convert %27 : (tensor<1x4xf32>) -> tensor<1x4xcomplex<f32>>
    %29 = stablehlo.broadcast_in_dim %28, dims = [0, 1] : (tensor<1x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %30 = stablehlo.multiply %22, %29 : tensor<4x4xcomplex<f32>>
    %31 = stablehlo.transpose %22, dims = [1, 0] : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %32 = stablehlo.real %31 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %33 = stablehlo.imag %31 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %34 = stablehlo.negate %33 : tensor<4x4xf32>
    %35 = stablehlo.complex %32, %34 : tensor<4x4xcomplex<f32>>
    %36 = stablehlo.dot_general %30, %35, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
    %37 = stablehlo.real %36 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %38 = stablehlo.imag %36 : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
    %39 = stablehlo.broadcast_in_dim %37, dims = [0, 1] : (tensor<4x4xf32>) -> tensor<4x4x1xf32>
    %40 = stablehlo.broadcast_in_dim %38, dims = [0, 1] : (tensor<4x4xf32>) -> tensor<4x4x1xf32>
    %41 = stablehlo.concatenate %39, %40, dim = 2 : (tensor<4x4x1xf32>, tensor<4x4x1xf32>) -> tensor<4x4x2xf32>
    return %26, %41 : tensor<4xf32>, tensor<4x4x2xf32>
  }
}
