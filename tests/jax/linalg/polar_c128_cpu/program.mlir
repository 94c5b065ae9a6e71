module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xcomplex<f64>>) -> (tensor<4x4x2xf64> {jax.result_info = "result[0]"}, tensor<4x4x2xf64> {jax.result_info = "result[1]"}) {
    %0:2 = call @polar(%arg0) : (tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>)
    %1 = stablehlo.real %0#0 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %2 = stablehlo.imag %0#0 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<4x4xf64>) -> tensor<4x4x1xf64>
    %4 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<4x4xf64>) -> tensor<4x4x1xf64>
    %5 = stablehlo.concatenate %3, %4, dim = 2 : (tensor<4x4x1xf64>, tensor<4x4x1xf64>) -> tensor<4x4x2xf64>
    %6 = stablehlo.real %0#1 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %7 = stablehlo.imag %0#1 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %8 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<4x4xf64>) -> tensor<4x4x1xf64>
    %9 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<4x4xf64>) -> tensor<4x4x1xf64>
    %10 = stablehlo.concatenate %8, %9, dim = 2 : (tensor<4x4x1xf64>, tensor<4x4x1xf64>) -> tensor<4x4x2xf64>
    return %5, %10 : tensor<4x4x2xf64>, tensor<4x4x2xf64>
  }
  func.func private @polar(%arg0: tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) {
    %0:2 = call @_polar_2d(%arg0) : (tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>)
    return %0#0, %0#1 : tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>
  }
  func.func private @_polar_2d(%arg0: tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) {
    %0:2 = call @qdwh(%arg0) : (tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>)
    return %0#0, %0#1 : tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>
  }
  func.func private @qdwh(%arg0: tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) {
    %cst = stablehlo.constant dense<[[1.9999999999417923, 34359738368.500023, 0.99999999994179234], [1.9990243905344156, 2048.5000000596115, 0.99902415234849673]]> : tensor<2x3xf64>
    %cst_0 = stablehlo.constant dense<[[15.334391790145411, 72.318496654957983, 0.79085234300001905], [3.0002486420290606, 3.7798139715500216, 0.37230849152563888], [2.6669122378841328, 3.0005525511400535, 0.33336402814552901], [2.6666666666667971, 3.0000000000002931, 0.33333333333334964]]> : tensor<4x3xf64>
    %0 = call @norm(%arg0) : (tensor<4x4xcomplex<f64>>) -> tensor<f64>
    %1 = call @norm_0(%arg0) : (tensor<4x4xcomplex<f64>>) -> tensor<f64>
    %2 = stablehlo.rsqrt %0 : tensor<f64>
    %3 = stablehlo.rsqrt %1 : tensor<f64>
    %4 = stablehlo.multiply %2, %3 : tensor<f64>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %5 = stablehlo.compare EQ, %0, %cst_1, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
    %c = stablehlo.constant dense<1> : tensor<i64>
    %6 = call @_where(%5, %c, %4) : (tensor<i1>, tensor<i64>, tensor<f64>) -> tensor<f64>
    %7 = stablehlo.convert %6 : (tensor<f64>) -> tensor<complex<f64>>
    %8 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %9 = stablehlo.multiply %arg0, %8 : tensor<4x4xcomplex<f64>>
    %cst_2 = stablehlo.constant dense<1.1102230246251565E-15> : tensor<f64>
    %10 = stablehlo.cbrt %cst_2 : tensor<f64>
    %11 = stablehlo.convert %cst : (tensor<2x3xf64>) -> tensor<2x3xcomplex<f64>>
    %c_3 = stablehlo.constant dense<0> : tensor<i64>
    %c_4 = stablehlo.constant dense<0> : tensor<i64>
    %12:4 = stablehlo.while(%iterArg = %11, %iterArg_12 = %c_4, %iterArg_13 = %c_3, %iterArg_14 = %9) : tensor<2x3xcomplex<f64>>, tensor<i64>, tensor<i64>, tensor<4x4xcomplex<f64>>
    cond {
      %c_15 = stablehlo.constant dense<2> : tensor<i64>
      %42 = stablehlo.compare LT, %iterArg_12, %c_15, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %42 : tensor<i1>
    } do {
      %42:2 = func.call @closed_call(%iterArg, %iterArg_13, %iterArg_14) : (tensor<2x3xcomplex<f64>>, tensor<i64>, tensor<4x4xcomplex<f64>>) -> (tensor<i64>, tensor<4x4xcomplex<f64>>)
      %c_15 = stablehlo.constant dense<1> : tensor<i64>
      %43 = stablehlo.add %iterArg_12, %c_15 : tensor<i64>
      stablehlo.return %iterArg, %43, %42#0, %42#1 : tensor<2x3xcomplex<f64>>, tensor<i64>, tensor<i64>, tensor<4x4xcomplex<f64>>
    }
    %13 = stablehlo.convert %cst_0 : (tensor<4x3xf64>) -> tensor<4x3xcomplex<f64>>
    %c_5 = stablehlo.constant dense<0> : tensor<i64>
    %c_6 = stablehlo.constant dense<true> : tensor<i1>
    %c_7 = stablehlo.constant dense<0> : tensor<i64>
    %14:6 = stablehlo.while(%iterArg = %13, %iterArg_12 = %10, %iterArg_13 = %c_7, %iterArg_14 = %c_5, %iterArg_15 = %12#3, %iterArg_16 = %c_6) : tensor<4x3xcomplex<f64>>, tensor<f64>, tensor<i64>, tensor<i64>, tensor<4x4xcomplex<f64>>, tensor<i1>
    cond {
      %c_17 = stablehlo.constant dense<4> : tensor<i64>
      %42 = stablehlo.compare LT, %iterArg_13, %c_17, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %42 : tensor<i1>
    } do {
      %42:3 = func.call @closed_call_2(%iterArg, %iterArg_12, %iterArg_14, %iterArg_15, %iterArg_16) : (tensor<4x3xcomplex<f64>>, tensor<f64>, tensor<i64>, tensor<4x4xcomplex<f64>>, tensor<i1>) -> (tensor<i64>, tensor<4x4xcomplex<f64>>, tensor<i1>)
      %c_17 = stablehlo.constant dense<1> : tensor<i64>
      %43 = stablehlo.add %iterArg_13, %c_17 : tensor<i64>
      stablehlo.return %iterArg, %iterArg_12, %43, %42#0, %42#1, %42#2 : tensor<4x3xcomplex<f64>>, tensor<f64>, tensor<i64>, tensor<i64>, tensor<4x4xcomplex<f64>>, tensor<i1>
    }
    %c_8 = stablehlo.constant dense<6> : tensor<i64>
    %15:4 = stablehlo.while(%iterArg = %10, %iterArg_12 = %c_8, %iterArg_13 = %14#4, %iterArg_14 = %14#5) : tensor<f64>, tensor<i64>, tensor<4x4xcomplex<f64>>, tensor<i1>
    cond {
      %c_15 = stablehlo.constant dense<10> : tensor<i64>
      %42 = stablehlo.compare LT, %iterArg_12, %c_15, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %c_16 = stablehlo.constant dense<false> : tensor<i1>
      %43 = stablehlo.broadcast_in_dim %c_16, dims = [] : (tensor<i1>) -> tensor<i1>
      %44 = stablehlo.compare NE, %42, %43, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %45 = stablehlo.convert %44 : tensor<i1>
      %46 = stablehlo.and %iterArg_14, %45 : tensor<i1>
      stablehlo.return %46 : tensor<i1>
    } do {
      %42 = stablehlo.transpose %iterArg_13, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
      %43 = stablehlo.real %42 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
      %44 = stablehlo.imag %42 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
      %45 = stablehlo.negate %44 : tensor<4x4xf64>
      %46 = stablehlo.complex %43, %45 : tensor<4x4xcomplex<f64>>
      %47 = stablehlo.dot_general %46, %iterArg_13, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
      %cst_15 = stablehlo.constant dense<(3.000000e+00,0.000000e+00)> : tensor<complex<f64>>
      %48 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
      %49 = stablehlo.multiply %48, %47 : tensor<4x4xcomplex<f64>>
      %50 = stablehlo.iota dim = 0 : tensor<4x4xi64>
      %51 = stablehlo.iota dim = 1 : tensor<4x4xi64>
      %c_16 = stablehlo.constant dense<0> : tensor<i64>
      %52 = stablehlo.broadcast_in_dim %c_16, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
      %53 = stablehlo.add %50, %52 : tensor<4x4xi64>
      %54 = stablehlo.compare EQ, %53, %51, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
      %55 = stablehlo.convert %54 : (tensor<4x4xi1>) -> tensor<4x4xcomplex<f64>>
      %56 = stablehlo.add %49, %55 : tensor<4x4xcomplex<f64>>
      %57 = stablehlo.iota dim = 0 : tensor<4x4xi64>
      %58 = stablehlo.iota dim = 1 : tensor<4x4xi64>
      %c_17 = stablehlo.constant dense<0> : tensor<i64>
      %59 = stablehlo.broadcast_in_dim %c_17, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
      %60 = stablehlo.add %57, %59 : tensor<4x4xi64>
      %61 = stablehlo.compare EQ, %60, %58, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
      %62 = stablehlo.convert %61 : (tensor<4x4xi1>) -> tensor<4x4xcomplex<f64>>
      %63 = stablehlo.iota dim = 0 : tensor<4x4xi32>
      %c_18 = stablehlo.constant dense<4> : tensor<i32>
      %64 = stablehlo.broadcast_in_dim %c_18, dims = [] : (tensor<i32>) -> tensor<4x4xi32>
      %65 = stablehlo.compare LT, %63, %64, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
      %66 = stablehlo.iota dim = 1 : tensor<4x4xi32>
      %c_19 = stablehlo.constant dense<4> : tensor<i32>
      %67 = stablehlo.broadcast_in_dim %c_19, dims = [] : (tensor<i32>) -> tensor<4x4xi32>
      %68 = stablehlo.compare LT, %66, %67, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
      %69 = stablehlo.and %65, %68 : tensor<4x4xi1>
      %70 = func.call @_where_6(%69, %56, %62) : (tensor<4x4xi1>, tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
      %71:2 = stablehlo.custom_call @lapack_zpotrf_ffi(%70) {backend_config = "", mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], []) {i=4, j=4, k=4, l=4}, custom>} : (tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<i32>)
      %c_20 = stablehlo.constant dense<0> : tensor<i32>
      %72 = stablehlo.broadcast_in_dim %c_20, dims = [] : (tensor<i32>) -> tensor<i32>
      %73 = stablehlo.compare EQ, %71#1, %72, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %74 = stablehlo.broadcast_in_dim %73, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
      %cst_21 = stablehlo.constant dense<(0x7FF8000000000000,0x7FF8000000000000)> : tensor<complex<f64>>
      %75 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
      %76 = stablehlo.broadcast_in_dim %74, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x4xi1>
      %77 = stablehlo.select %76, %71#0, %75 : tensor<4x4xi1>, tensor<4x4xcomplex<f64>>
      %78 = stablehlo.iota dim = 0 : tensor<4x4xi64>
      %c_22 = stablehlo.constant dense<0> : tensor<i64>
      %79 = stablehlo.broadcast_in_dim %c_22, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
      %80 = stablehlo.add %78, %79 : tensor<4x4xi64>
      %81 = stablehlo.iota dim = 1 : tensor<4x4xi64>
      %82 = stablehlo.compare GE, %80, %81, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
      %cst_23 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
      %83 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
      %84 = stablehlo.select %82, %77, %83 : tensor<4x4xi1>, tensor<4x4xcomplex<f64>>
      %85 = stablehlo.transpose %iterArg_13, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
      %86 = chlo.conj %84 : tensor<4x4xcomplex<f64>> -> tensor<4x4xcomplex<f64>>
      %87 = stablehlo.custom_call @lapack_ztrsm_ffi(%86, %85) {backend_config = "", mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=4, m=4, n=4}, custom>} : (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
      %88 = stablehlo.real %87 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
      %89 = stablehlo.imag %87 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
      %90 = stablehlo.negate %89 : tensor<4x4xf64>
      %91 = stablehlo.complex %88, %90 : tensor<4x4xcomplex<f64>>
      %92 = stablehlo.custom_call @lapack_ztrsm_ffi(%84, %91) {backend_config = "", mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 67 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=4, m=4, n=4}, custom>} : (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
      %93 = stablehlo.transpose %92, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
      %94 = stablehlo.real %93 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
      %95 = stablehlo.imag %93 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
      %96 = stablehlo.negate %95 : tensor<4x4xf64>
      %97 = stablehlo.complex %94, %96 : tensor<4x4xcomplex<f64>>
      %cst_24 = stablehlo.constant dense<(0.33333333333333331,0.000000e+00)> : tensor<complex<f64>>
      %98 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
      %99 = stablehlo.multiply %98, %iterArg_13 : tensor<4x4xcomplex<f64>>
      %cst_25 = stablehlo.constant dense<(2.6666666666666665,0.000000e+00)> : tensor<complex<f64>>
      %100 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
      %101 = stablehlo.multiply %100, %97 : tensor<4x4xcomplex<f64>>
      %102 = stablehlo.add %99, %101 : tensor<4x4xcomplex<f64>>
      %103 = stablehlo.subtract %102, %iterArg_13 : tensor<4x4xcomplex<f64>>
      %104 = func.call @norm_7(%103) : (tensor<4x4xcomplex<f64>>) -> tensor<f64>
      %105 = stablehlo.convert %iterArg : tensor<f64>
      %106 = stablehlo.compare GT, %104, %105, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %c_26 = stablehlo.constant dense<1> : tensor<i64>
      %107 = stablehlo.add %iterArg_12, %c_26 : tensor<i64>
      stablehlo.return %iterArg, %107, %102, %106 : tensor<f64>, tensor<i64>, tensor<4x4xcomplex<f64>>, tensor<i1>
    }
    %cst_9 = stablehlo.constant dense<(1.500000e+00,0.000000e+00)> : tensor<complex<f64>>
    %16 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %17 = stablehlo.multiply %16, %15#2 : tensor<4x4xcomplex<f64>>
    %cst_10 = stablehlo.constant dense<(5.000000e-01,0.000000e+00)> : tensor<complex<f64>>
    %18 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %19 = stablehlo.multiply %18, %15#2 : tensor<4x4xcomplex<f64>>
    %20 = stablehlo.transpose %15#2, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %21 = stablehlo.real %20 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %22 = stablehlo.imag %20 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %23 = stablehlo.negate %22 : tensor<4x4xf64>
    %24 = stablehlo.complex %21, %23 : tensor<4x4xcomplex<f64>>
    %25 = stablehlo.dot_general %24, %15#2, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %26 = stablehlo.dot_general %19, %25, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %27 = stablehlo.subtract %17, %26 : tensor<4x4xcomplex<f64>>
    %28 = stablehlo.transpose %27, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %29 = stablehlo.real %28 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %30 = stablehlo.imag %28 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %31 = stablehlo.negate %30 : tensor<4x4xf64>
    %32 = stablehlo.complex %29, %31 : tensor<4x4xcomplex<f64>>
    %33 = stablehlo.dot_general %32, %arg0, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %34 = stablehlo.transpose %33, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %35 = stablehlo.real %34 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %36 = stablehlo.imag %34 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %37 = stablehlo.negate %36 : tensor<4x4xf64>
    %38 = stablehlo.complex %35, %37 : tensor<4x4xcomplex<f64>>
    %39 = stablehlo.add %33, %38 : tensor<4x4xcomplex<f64>>
    %cst_11 = stablehlo.constant dense<(2.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %40 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %41 = stablehlo.divide %39, %40 : tensor<4x4xcomplex<f64>>
    return %27, %41 : tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>
  }
  func.func private @norm(%arg0: tensor<4x4xcomplex<f64>>) -> tensor<f64> {
    %0 = stablehlo.abs %arg0 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x4xf64>, tensor<f64>) -> tensor<4xf64>
    %cst_0 = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
    %2 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.maximum across dimensions = [0] : (tensor<4xf64>, tensor<f64>) -> tensor<f64>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %3 = stablehlo.maximum %cst_1, %2 : tensor<f64>
    return %3 : tensor<f64>
  }
  func.func private @norm_0(%arg0: tensor<4x4xcomplex<f64>>) -> tensor<f64> {
    %0 = stablehlo.abs %arg0 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x4xf64>, tensor<f64>) -> tensor<4xf64>
    %cst_0 = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
    %2 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.maximum across dimensions = [0] : (tensor<4xf64>, tensor<f64>) -> tensor<f64>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %3 = stablehlo.maximum %cst_1, %2 : tensor<f64>
    return %3 : tensor<f64>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<i64>, %arg2: tensor<f64>) -> tensor<f64> {
    %0 = stablehlo.convert %arg1 : (tensor<i64>) -> tensor<f64>
    %1 = stablehlo.select %arg0, %0, %arg2 : tensor<i1>, tensor<f64>
    return %1 : tensor<f64>
  }
  func.func private @closed_call(%arg0: tensor<2x3xcomplex<f64>>, %arg1: tensor<i64>, %arg2: tensor<4x4xcomplex<f64>>) -> (tensor<i64>, tensor<4x4xcomplex<f64>>) {
    %c = stablehlo.constant dense<1> : tensor<i64>
    %0 = stablehlo.add %arg1, %c : tensor<i64>
    %1 = call @dynamic_index_in_dim(%arg0, %arg1) : (tensor<2x3xcomplex<f64>>, tensor<i64>) -> tensor<3xcomplex<f64>>
    %2 = stablehlo.slice %1 [0:1] : (tensor<3xcomplex<f64>>) -> tensor<1xcomplex<f64>>
    %3 = stablehlo.reshape %2 : (tensor<1xcomplex<f64>>) -> tensor<complex<f64>>
    %4 = stablehlo.slice %1 [1:2] : (tensor<3xcomplex<f64>>) -> tensor<1xcomplex<f64>>
    %5 = stablehlo.reshape %4 : (tensor<1xcomplex<f64>>) -> tensor<complex<f64>>
    %6 = stablehlo.slice %1 [2:3] : (tensor<3xcomplex<f64>>) -> tensor<1xcomplex<f64>>
    %7 = stablehlo.reshape %6 : (tensor<1xcomplex<f64>>) -> tensor<complex<f64>>
    %8 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %9 = stablehlo.multiply %8, %arg2 : tensor<4x4xcomplex<f64>>
    %10 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %11 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %12 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %13 = stablehlo.add %10, %12 : tensor<4x4xi64>
    %14 = stablehlo.compare EQ, %13, %11, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %15 = stablehlo.convert %14 : (tensor<4x4xi1>) -> tensor<4x4xcomplex<f64>>
    %cst = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %16 = stablehlo.pad %9, %cst, low = [0, 0], high = [4, 0], interior = [0, 0] : (tensor<4x4xcomplex<f64>>, tensor<complex<f64>>) -> tensor<8x4xcomplex<f64>>
    %c_1 = stablehlo.constant dense<4> : tensor<i64>
    %c_2 = stablehlo.constant dense<0> : tensor<i64>
    %17 = stablehlo.dynamic_update_slice %16, %15, %c_1, %c_2 : (tensor<8x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>, tensor<i64>, tensor<i64>) -> tensor<8x4xcomplex<f64>>
    %18:2 = stablehlo.custom_call @lapack_zgeqrf_ffi(%17) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m]) {i=8, j=4, k=8, l=4, m=4}, custom>} : (tensor<8x4xcomplex<f64>>) -> (tensor<8x4xcomplex<f64>>, tensor<4xcomplex<f64>>)
    %19 = stablehlo.custom_call @lapack_zungqr_ffi(%18#0, %18#1) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k])->([l, m]) {i=8, j=4, k=4, l=8, m=4}, custom>} : (tensor<8x4xcomplex<f64>>, tensor<4xcomplex<f64>>) -> tensor<8x4xcomplex<f64>>
    %20 = stablehlo.slice %18#0 [0:4, 0:4] : (tensor<8x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %21 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %c_3 = stablehlo.constant dense<-1> : tensor<i64>
    %22 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %23 = stablehlo.add %21, %22 : tensor<4x4xi64>
    %24 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %25 = stablehlo.compare GE, %23, %24, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %cst_4 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %26 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %27 = stablehlo.select %25, %26, %20 : tensor<4x4xi1>, tensor<4x4xcomplex<f64>>
    %28 = stablehlo.slice %19 [0:4, 0:4] : (tensor<8x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %29 = stablehlo.iota dim = 0 : tensor<4x4xi32>
    %c_5 = stablehlo.constant dense<4> : tensor<i32>
    %30 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<4x4xi32>
    %31 = stablehlo.compare LT, %29, %30, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
    %32 = stablehlo.iota dim = 1 : tensor<4x4xi32>
    %c_6 = stablehlo.constant dense<4> : tensor<i32>
    %33 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<4x4xi32>
    %34 = stablehlo.compare LT, %32, %33, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
    %35 = stablehlo.and %31, %34 : tensor<4x4xi1>
    %c_7 = stablehlo.constant dense<0> : tensor<i64>
    %36 = call @_where_1(%35, %28, %c_7) : (tensor<4x4xi1>, tensor<4x4xcomplex<f64>>, tensor<i64>) -> tensor<4x4xcomplex<f64>>
    %c_8 = stablehlo.constant dense<4> : tensor<i64>
    %c_9 = stablehlo.constant dense<0> : tensor<i64>
    %37 = stablehlo.dynamic_slice %19, %c_8, %c_9, sizes = [4, 4] : (tensor<8x4xcomplex<f64>>, tensor<i64>, tensor<i64>) -> tensor<4x4xcomplex<f64>>
    %38 = stablehlo.iota dim = 0 : tensor<4x4xi32>
    %c_10 = stablehlo.constant dense<4> : tensor<i32>
    %39 = stablehlo.broadcast_in_dim %c_10, dims = [] : (tensor<i32>) -> tensor<4x4xi32>
    %40 = stablehlo.compare LT, %38, %39, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
    %41 = stablehlo.iota dim = 1 : tensor<4x4xi32>
    %c_11 = stablehlo.constant dense<4> : tensor<i32>
    %42 = stablehlo.broadcast_in_dim %c_11, dims = [] : (tensor<i32>) -> tensor<4x4xi32>
    %43 = stablehlo.compare LT, %41, %42, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
    %44 = stablehlo.and %40, %43 : tensor<4x4xi1>
    %c_12 = stablehlo.constant dense<0> : tensor<i64>
    %45 = call @_where_1(%44, %37, %c_12) : (tensor<4x4xi1>, tensor<4x4xcomplex<f64>>, tensor<i64>) -> tensor<4x4xcomplex<f64>>
    %46 = stablehlo.transpose %45, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %47 = stablehlo.real %46 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %48 = stablehlo.imag %46 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %49 = stablehlo.negate %48 : tensor<4x4xf64>
    %50 = stablehlo.complex %47, %49 : tensor<4x4xcomplex<f64>>
    %51 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %52 = stablehlo.multiply %51, %arg2 : tensor<4x4xcomplex<f64>>
    %53 = stablehlo.dot_general %36, %50, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %54 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %55 = stablehlo.multiply %54, %53 : tensor<4x4xcomplex<f64>>
    %56 = stablehlo.add %52, %55 : tensor<4x4xcomplex<f64>>
    return %0, %56 : tensor<i64>, tensor<4x4xcomplex<f64>>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<2x3xcomplex<f64>>, %arg1: tensor<i64>) -> tensor<3xcomplex<f64>> {
    %c = stablehlo.constant dense<0> : tensor<i64>
    %0 = stablehlo.compare LT, %arg1, %c, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %1 = stablehlo.convert %arg1 : tensor<i64>
    %c_0 = stablehlo.constant dense<2> : tensor<i64>
    %2 = stablehlo.add %1, %c_0 : tensor<i64>
    %3 = stablehlo.select %0, %2, %arg1 : tensor<i1>, tensor<i64>
    %c_1 = stablehlo.constant dense<0> : tensor<i64>
    %4 = stablehlo.dynamic_slice %arg0, %3, %c_1, sizes = [1, 3] : (tensor<2x3xcomplex<f64>>, tensor<i64>, tensor<i64>) -> tensor<1x3xcomplex<f64>>
    %5 = stablehlo.reshape %4 : (tensor<1x3xcomplex<f64>>) -> tensor<3xcomplex<f64>>
    return %5 : tensor<3xcomplex<f64>>
  }
  func.func private @_where_1(%arg0: tensor<4x4xi1>, %arg1: tensor<4x4xcomplex<f64>>, %arg2: tensor<i64>) -> tensor<4x4xcomplex<f64>> {
    %0 = stablehlo.convert %arg2 : (tensor<i64>) -> tensor<complex<f64>>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<4x4xi1>, tensor<4x4xcomplex<f64>>
    return %2 : tensor<4x4xcomplex<f64>>
  }
  func.func private @closed_call_2(%arg0: tensor<4x3xcomplex<f64>>, %arg1: tensor<f64>, %arg2: tensor<i64>, %arg3: tensor<4x4xcomplex<f64>>, %arg4: tensor<i1>) -> (tensor<i64>, tensor<4x4xcomplex<f64>>, tensor<i1>) {
    %c = stablehlo.constant dense<1> : tensor<i64>
    %0 = stablehlo.add %arg2, %c : tensor<i64>
    %1 = call @dynamic_index_in_dim_3(%arg0, %arg2) : (tensor<4x3xcomplex<f64>>, tensor<i64>) -> tensor<3xcomplex<f64>>
    %2 = stablehlo.slice %1 [0:1] : (tensor<3xcomplex<f64>>) -> tensor<1xcomplex<f64>>
    %3 = stablehlo.reshape %2 : (tensor<1xcomplex<f64>>) -> tensor<complex<f64>>
    %4 = stablehlo.slice %1 [1:2] : (tensor<3xcomplex<f64>>) -> tensor<1xcomplex<f64>>
    %5 = stablehlo.reshape %4 : (tensor<1xcomplex<f64>>) -> tensor<complex<f64>>
    %6 = stablehlo.slice %1 [2:3] : (tensor<3xcomplex<f64>>) -> tensor<1xcomplex<f64>>
    %7 = stablehlo.reshape %6 : (tensor<1xcomplex<f64>>) -> tensor<complex<f64>>
    %8 = stablehlo.transpose %arg3, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %9 = stablehlo.real %8 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %10 = stablehlo.imag %8 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %11 = stablehlo.negate %10 : tensor<4x4xf64>
    %12 = stablehlo.complex %9, %11 : tensor<4x4xcomplex<f64>>
    %13 = stablehlo.dot_general %12, %arg3, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %14 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %15 = stablehlo.multiply %14, %13 : tensor<4x4xcomplex<f64>>
    %16 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %17 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %18 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %19 = stablehlo.add %16, %18 : tensor<4x4xi64>
    %20 = stablehlo.compare EQ, %19, %17, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %21 = stablehlo.convert %20 : (tensor<4x4xi1>) -> tensor<4x4xcomplex<f64>>
    %22 = stablehlo.add %15, %21 : tensor<4x4xcomplex<f64>>
    %23 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %24 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %c_1 = stablehlo.constant dense<0> : tensor<i64>
    %25 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %26 = stablehlo.add %23, %25 : tensor<4x4xi64>
    %27 = stablehlo.compare EQ, %26, %24, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %28 = stablehlo.convert %27 : (tensor<4x4xi1>) -> tensor<4x4xcomplex<f64>>
    %29 = stablehlo.iota dim = 0 : tensor<4x4xi32>
    %c_2 = stablehlo.constant dense<4> : tensor<i32>
    %30 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<4x4xi32>
    %31 = stablehlo.compare LT, %29, %30, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
    %32 = stablehlo.iota dim = 1 : tensor<4x4xi32>
    %c_3 = stablehlo.constant dense<4> : tensor<i32>
    %33 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<4x4xi32>
    %34 = stablehlo.compare LT, %32, %33, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
    %35 = stablehlo.and %31, %34 : tensor<4x4xi1>
    %36 = call @_where_4(%35, %22, %28) : (tensor<4x4xi1>, tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %37:2 = stablehlo.custom_call @lapack_zpotrf_ffi(%36) {backend_config = "", mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], []) {i=4, j=4, k=4, l=4}, custom>} : (tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<i32>)
    %c_4 = stablehlo.constant dense<0> : tensor<i32>
    %38 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<i32>
    %39 = stablehlo.compare EQ, %37#1, %38, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %40 = stablehlo.broadcast_in_dim %39, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst = stablehlo.constant dense<(0x7FF8000000000000,0x7FF8000000000000)> : tensor<complex<f64>>
    %41 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %42 = stablehlo.broadcast_in_dim %40, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x4xi1>
    %43 = stablehlo.select %42, %37#0, %41 : tensor<4x4xi1>, tensor<4x4xcomplex<f64>>
    %44 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %c_5 = stablehlo.constant dense<0> : tensor<i64>
    %45 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %46 = stablehlo.add %44, %45 : tensor<4x4xi64>
    %47 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %48 = stablehlo.compare GE, %46, %47, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %cst_6 = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f64>>
    %49 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %50 = stablehlo.select %48, %43, %49 : tensor<4x4xi1>, tensor<4x4xcomplex<f64>>
    %51 = stablehlo.transpose %arg3, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %52 = chlo.conj %50 : tensor<4x4xcomplex<f64>> -> tensor<4x4xcomplex<f64>>
    %53 = stablehlo.custom_call @lapack_ztrsm_ffi(%52, %51) {backend_config = "", mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=4, m=4, n=4}, custom>} : (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %54 = stablehlo.real %53 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %55 = stablehlo.imag %53 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %56 = stablehlo.negate %55 : tensor<4x4xf64>
    %57 = stablehlo.complex %54, %56 : tensor<4x4xcomplex<f64>>
    %58 = stablehlo.custom_call @lapack_ztrsm_ffi(%50, %57) {backend_config = "", mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 67 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=4, m=4, n=4}, custom>} : (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %59 = stablehlo.transpose %58, dims = [1, 0] : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>>
    %60 = stablehlo.real %59 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %61 = stablehlo.imag %59 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %62 = stablehlo.negate %61 : tensor<4x4xf64>
    %63 = stablehlo.complex %60, %62 : tensor<4x4xcomplex<f64>>
    %64 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %65 = stablehlo.multiply %64, %arg3 : tensor<4x4xcomplex<f64>>
    %66 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<complex<f64>>) -> tensor<4x4xcomplex<f64>>
    %67 = stablehlo.multiply %66, %63 : tensor<4x4xcomplex<f64>>
    %68 = stablehlo.add %65, %67 : tensor<4x4xcomplex<f64>>
    %69 = stablehlo.subtract %68, %arg3 : tensor<4x4xcomplex<f64>>
    %70 = call @norm_5(%69) : (tensor<4x4xcomplex<f64>>) -> tensor<f64>
    %71 = stablehlo.convert %arg1 : tensor<f64>
    %72 = stablehlo.compare GT, %70, %71, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
    return %0, %68, %72 : tensor<i64>, tensor<4x4xcomplex<f64>>, tensor<i1>
  }
  func.func private @dynamic_index_in_dim_3(%arg0: tensor<4x3xcomplex<f64>>, %arg1: tensor<i64>) -> tensor<3xcomplex<f64>> {
    %c = stablehlo.constant dense<0> : tensor<i64>
    %0 = stablehlo.compare LT, %arg1, %c, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %1 = stablehlo.convert %arg1 : tensor<i64>
    %c_0 = stablehlo.constant dense<4> : tensor<i64>
    %2 = stablehlo.add %1, %c_0 : tensor<i64>
    %3 = stablehlo.select %0, %2, %arg1 : tensor<i1>, tensor<i64>
    %c_1 = stablehlo.constant dense<0> : tensor<i64>
    %4 = stablehlo.dynamic_slice %arg0, %3, %c_1, sizes = [1, 3] : (tensor<4x3xcomplex<f64>>, tensor<i64>, tensor<i64>) -> tensor<1x3xcomplex<f64>>
    %5 = stablehlo.reshape %4 : (tensor<1x3xcomplex<f64>>) -> tensor<3xcomplex<f64>>
    return %5 : tensor<3xcomplex<f64>>
  }
  func.func private @_where_4(%arg0: tensor<4x4xi1>, %arg1: tensor<4x4xcomplex<f64>>, %arg2: tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4x4xi1>, tensor<4x4xcomplex<f64>>
    return %0 : tensor<4x4xcomplex<f64>>
  }
  func.func private @norm_5(%arg0: tensor<4x4xcomplex<f64>>) -> tensor<f64> {
    %0 = stablehlo.real %arg0 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %1 = stablehlo.imag %arg0 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %2 = stablehlo.negate %1 : tensor<4x4xf64>
    %3 = stablehlo.complex %0, %2 : tensor<4x4xcomplex<f64>>
    %4 = stablehlo.multiply %arg0, %3 : tensor<4x4xcomplex<f64>>
    %5 = stablehlo.real %4 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x4xf64>, tensor<f64>) -> tensor<f64>
    %7 = stablehlo.sqrt %6 : tensor<f64>
    return %7 : tensor<f64>
  }
  func.func private @_where_6(%arg0: tensor<4x4xi1>, %arg1: tensor<4x4xcomplex<f64>>, %arg2: tensor<4x4xcomplex<f64>>) -> tensor<4x4xcomplex<f64>> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4x4xi1>, tensor<4x4xcomplex<f64>>
    return %0 : tensor<4x4xcomplex<f64>>
  }
  func.func private @norm_7(%arg0: tensor<4x4xcomplex<f64>>) -> tensor<f64> {
    %0 = stablehlo.real %arg0 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %1 = stablehlo.imag %arg0 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %2 = stablehlo.negate %1 : tensor<4x4xf64>
    %3 = stablehlo.complex %0, %2 : tensor<4x4xcomplex<f64>>
    %4 = stablehlo.multiply %arg0, %3 : tensor<4x4xcomplex<f64>>
    %5 = stablehlo.real %4 : (tensor<4x4xcomplex<f64>>) -> tensor<4x4xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x4xf64>, tensor<f64>) -> tensor<f64>
    %7 = stablehlo.sqrt %6 : tensor<f64>
    return %7 : tensor<f64>
  }
}
