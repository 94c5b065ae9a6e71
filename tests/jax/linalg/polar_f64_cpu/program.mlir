module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xf64>) -> (tensor<4x4xf64> {jax.result_info = "result[0]"}, tensor<4x4xf64> {jax.result_info = "result[1]"}) {
    %0:2 = call @polar(%arg0) : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4x4xf64>)
    return %0#0, %0#1 : tensor<4x4xf64>, tensor<4x4xf64>
  }
  func.func private @polar(%arg0: tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4x4xf64>) {
    %0:2 = call @_polar_2d(%arg0) : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4x4xf64>)
    return %0#0, %0#1 : tensor<4x4xf64>, tensor<4x4xf64>
  }
  func.func private @_polar_2d(%arg0: tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4x4xf64>) {
    %0:2 = call @qdwh(%arg0) : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4x4xf64>)
    return %0#0, %0#1 : tensor<4x4xf64>, tensor<4x4xf64>
  }
  func.func private @qdwh(%arg0: tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4x4xf64>) {
    %cst = stablehlo.constant dense<[[1.9999999999417923, 34359738368.500023, 0.99999999994179234], [1.9990243905344156, 2048.5000000596115, 0.99902415234849673]]> : tensor<2x3xf64>
    %cst_0 = stablehlo.constant dense<[[15.334391790145411, 72.318496654957983, 0.79085234300001905], [3.0002486420290606, 3.7798139715500216, 0.37230849152563888], [2.6669122378841328, 3.0005525511400535, 0.33336402814552901], [2.6666666666667971, 3.0000000000002931, 0.33333333333334964]]> : tensor<4x3xf64>
    %0 = call @norm(%arg0) : (tensor<4x4xf64>) -> tensor<f64>
    %1 = call @norm_0(%arg0) : (tensor<4x4xf64>) -> tensor<f64>
    %2 = stablehlo.rsqrt %0 : tensor<f64>
    %3 = stablehlo.rsqrt %1 : tensor<f64>
    %4 = stablehlo.multiply %2, %3 : tensor<f64>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %5 = stablehlo.compare EQ, %0, %cst_1, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
    %c = stablehlo.constant dense<1> : tensor<i64>
    %6 = call @_where(%5, %c, %4) : (tensor<i1>, tensor<i64>, tensor<f64>) -> tensor<f64>
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %8 = stablehlo.multiply %arg0, %7 : tensor<4x4xf64>
    %cst_2 = stablehlo.constant dense<1.1102230246251565E-15> : tensor<f64>
    %9 = stablehlo.cbrt %cst_2 : tensor<f64>
    %c_3 = stablehlo.constant dense<0> : tensor<i64>
    %c_4 = stablehlo.constant dense<0> : tensor<i64>
    %10:4 = stablehlo.while(%iterArg = %cst, %iterArg_12 = %c_4, %iterArg_13 = %c_3, %iterArg_14 = %8) : tensor<2x3xf64>, tensor<i64>, tensor<i64>, tensor<4x4xf64>
    cond {
      %c_15 = stablehlo.constant dense<2> : tensor<i64>
      %27 = stablehlo.compare LT, %iterArg_12, %c_15, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %27 : tensor<i1>
    } do {
      %27:2 = func.call @closed_call(%iterArg, %iterArg_13, %iterArg_14) : (tensor<2x3xf64>, tensor<i64>, tensor<4x4xf64>) -> (tensor<i64>, tensor<4x4xf64>)
      %c_15 = stablehlo.constant dense<1> : tensor<i64>
      %28 = stablehlo.add %iterArg_12, %c_15 : tensor<i64>
      stablehlo.return %iterArg, %28, %27#0, %27#1 : tensor<2x3xf64>, tensor<i64>, tensor<i64>, tensor<4x4xf64>
    }
    %c_5 = stablehlo.constant dense<0> : tensor<i64>
    %c_6 = stablehlo.constant dense<true> : tensor<i1>
    %c_7 = stablehlo.constant dense<0> : tensor<i64>
    %11:6 = stablehlo.while(%iterArg = %cst_0, %iterArg_12 = %9, %iterArg_13 = %c_7, %iterArg_14 = %c_5, %iterArg_15 = %10#3, %iterArg_16 = %c_6) : tensor<4x3xf64>, tensor<f64>, tensor<i64>, tensor<i64>, tensor<4x4xf64>, tensor<i1>
    cond {
      %c_17 = stablehlo.constant dense<4> : tensor<i64>
      %27 = stablehlo.compare LT, %iterArg_13, %c_17, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %27 : tensor<i1>
    } do {
      %27:3 = func.call @closed_call_2(%iterArg, %iterArg_12, %iterArg_14, %iterArg_15, %iterArg_16) : (tensor<4x3xf64>, tensor<f64>, tensor<i64>, tensor<4x4xf64>, tensor<i1>) -> (tensor<i64>, tensor<4x4xf64>, tensor<i1>)
      %c_17 = stablehlo.constant dense<1> : tensor<i64>
      %28 = stablehlo.add %iterArg_13, %c_17 : tensor<i64>
      stablehlo.return %iterArg, %iterArg_12, %28, %27#0, %27#1, %27#2 : tensor<4x3xf64>, tensor<f64>, tensor<i64>, tensor<i64>, tensor<4x4xf64>, tensor<i1>
    }
    %c_8 = stablehlo.constant dense<6> : tensor<i64>
    %12:4 = stablehlo.while(%iterArg = %9, %iterArg_12 = %c_8, %iterArg_13 = %11#4, %iterArg_14 = %11#5) : tensor<f64>, tensor<i64>, tensor<4x4xf64>, tensor<i1>
    cond {
      %c_15 = stablehlo.constant dense<10> : tensor<i64>
      %27 = stablehlo.compare LT, %iterArg_12, %c_15, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %c_16 = stablehlo.constant dense<false> : tensor<i1>
      %28 = stablehlo.broadcast_in_dim %c_16, dims = [] : (tensor<i1>) -> tensor<i1>
      %29 = stablehlo.compare NE, %27, %28, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %30 = stablehlo.convert %29 : tensor<i1>
      %31 = stablehlo.and %iterArg_14, %30 : tensor<i1>
      stablehlo.return %31 : tensor<i1>
    } do {
      %27 = stablehlo.transpose %iterArg_13, dims = [1, 0] : (tensor<4x4xf64>) -> tensor<4x4xf64>
      %28 = stablehlo.dot_general %27, %iterArg_13, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
      %cst_15 = stablehlo.constant dense<3.000000e+00> : tensor<f64>
      %29 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
      %30 = stablehlo.multiply %29, %28 : tensor<4x4xf64>
      %31 = stablehlo.iota dim = 0 : tensor<4x4xi64>
      %32 = stablehlo.iota dim = 1 : tensor<4x4xi64>
      %c_16 = stablehlo.constant dense<0> : tensor<i64>
      %33 = stablehlo.broadcast_in_dim %c_16, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
      %34 = stablehlo.add %31, %33 : tensor<4x4xi64>
      %35 = stablehlo.compare EQ, %34, %32, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
      %36 = stablehlo.convert %35 : (tensor<4x4xi1>) -> tensor<4x4xf64>
      %37 = stablehlo.add %30, %36 : tensor<4x4xf64>
      %38 = stablehlo.iota dim = 0 : tensor<4x4xi64>
      %39 = stablehlo.iota dim = 1 : tensor<4x4xi64>
      %c_17 = stablehlo.constant dense<0> : tensor<i64>
      %40 = stablehlo.broadcast_in_dim %c_17, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
      %41 = stablehlo.add %38, %40 : tensor<4x4xi64>
      %42 = stablehlo.compare EQ, %41, %39, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
      %43 = stablehlo.convert %42 : (tensor<4x4xi1>) -> tensor<4x4xf64>
      %44 = stablehlo.iota dim = 0 : tensor<4x4xi32>
      %c_18 = stablehlo.constant dense<4> : tensor<i32>
      %45 = stablehlo.broadcast_in_dim %c_18, dims = [] : (tensor<i32>) -> tensor<4x4xi32>
      %46 = stablehlo.compare LT, %44, %45, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
      %47 = stablehlo.iota dim = 1 : tensor<4x4xi32>
      %c_19 = stablehlo.constant dense<4> : tensor<i32>
      %48 = stablehlo.broadcast_in_dim %c_19, dims = [] : (tensor<i32>) -> tensor<4x4xi32>
      %49 = stablehlo.compare LT, %47, %48, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
      %50 = stablehlo.and %46, %49 : tensor<4x4xi1>
      %51 = func.call @_where_6(%50, %37, %43) : (tensor<4x4xi1>, tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
      %52:2 = stablehlo.custom_call @lapack_dpotrf_ffi(%51) {backend_config = "", mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], []) {i=4, j=4, k=4, l=4}, custom>} : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<i32>)
      %c_20 = stablehlo.constant dense<0> : tensor<i32>
      %53 = stablehlo.broadcast_in_dim %c_20, dims = [] : (tensor<i32>) -> tensor<i32>
      %54 = stablehlo.compare EQ, %52#1, %53, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %55 = stablehlo.broadcast_in_dim %54, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
      %cst_21 = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
      %56 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
      %57 = stablehlo.broadcast_in_dim %55, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x4xi1>
      %58 = stablehlo.select %57, %52#0, %56 : tensor<4x4xi1>, tensor<4x4xf64>
      %59 = stablehlo.iota dim = 0 : tensor<4x4xi64>
      %c_22 = stablehlo.constant dense<0> : tensor<i64>
      %60 = stablehlo.broadcast_in_dim %c_22, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
      %61 = stablehlo.add %59, %60 : tensor<4x4xi64>
      %62 = stablehlo.iota dim = 1 : tensor<4x4xi64>
      %63 = stablehlo.compare GE, %61, %62, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
      %cst_23 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %64 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
      %65 = stablehlo.select %63, %58, %64 : tensor<4x4xi1>, tensor<4x4xf64>
      %66 = stablehlo.transpose %iterArg_13, dims = [1, 0] : (tensor<4x4xf64>) -> tensor<4x4xf64>
      %67 = stablehlo.custom_call @lapack_dtrsm_ffi(%65, %66) {backend_config = "", mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=4, m=4, n=4}, custom>} : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
      %68 = stablehlo.custom_call @lapack_dtrsm_ffi(%65, %67) {backend_config = "", mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=4, m=4, n=4}, custom>} : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
      %69 = stablehlo.transpose %68, dims = [1, 0] : (tensor<4x4xf64>) -> tensor<4x4xf64>
      %cst_24 = stablehlo.constant dense<0.33333333333333331> : tensor<f64>
      %70 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
      %71 = stablehlo.multiply %70, %iterArg_13 : tensor<4x4xf64>
      %cst_25 = stablehlo.constant dense<2.6666666666666665> : tensor<f64>
      %72 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
      %73 = stablehlo.multiply %72, %69 : tensor<4x4xf64>
      %74 = stablehlo.add %71, %73 : tensor<4x4xf64>
      %75 = stablehlo.subtract %74, %iterArg_13 : tensor<4x4xf64>
      %76 = func.call @norm_7(%75) : (tensor<4x4xf64>) -> tensor<f64>
      %77 = stablehlo.convert %iterArg : tensor<f64>
      %78 = stablehlo.compare GT, %76, %77, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %c_26 = stablehlo.constant dense<1> : tensor<i64>
      %79 = stablehlo.add %iterArg_12, %c_26 : tensor<i64>
      stablehlo.return %iterArg, %79, %74, %78 : tensor<f64>, tensor<i64>, tensor<4x4xf64>, tensor<i1>
    }
    %cst_9 = stablehlo.constant dense<1.500000e+00> : tensor<f64>
    %13 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %14 = stablehlo.multiply %13, %12#2 : tensor<4x4xf64>
    %cst_10 = stablehlo.constant dense<5.000000e-01> : tensor<f64>
    %15 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %16 = stablehlo.multiply %15, %12#2 : tensor<4x4xf64>
    %17 = stablehlo.transpose %12#2, dims = [1, 0] : (tensor<4x4xf64>) -> tensor<4x4xf64>
    %18 = stablehlo.dot_general %17, %12#2, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
    %19 = stablehlo.dot_general %16, %18, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
    %20 = stablehlo.subtract %14, %19 : tensor<4x4xf64>
    %21 = stablehlo.transpose %20, dims = [1, 0] : (tensor<4x4xf64>) -> tensor<4x4xf64>
    %22 = stablehlo.dot_general %21, %arg0, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
    %23 = stablehlo.transpose %22, dims = [1, 0] : (tensor<4x4xf64>) -> tensor<4x4xf64>
    %24 = stablehlo.add %22, %23 : tensor<4x4xf64>
    %cst_11 = stablehlo.constant dense<2.000000e+00> : tensor<f64>
    %25 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %26 = stablehlo.divide %24, %25 : tensor<4x4xf64>
    return %20, %26 : tensor<4x4xf64>, tensor<4x4xf64>
  }
  func.func private @norm(%arg0: tensor<4x4xf64>) -> tensor<f64> {
    %0 = stablehlo.abs %arg0 : tensor<4x4xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x4xf64>, tensor<f64>) -> tensor<4xf64>
    %cst_0 = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
    %2 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.maximum across dimensions = [0] : (tensor<4xf64>, tensor<f64>) -> tensor<f64>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %3 = stablehlo.maximum %cst_1, %2 : tensor<f64>
    return %3 : tensor<f64>
  }
  func.func private @norm_0(%arg0: tensor<4x4xf64>) -> tensor<f64> {
    %0 = stablehlo.abs %arg0 : tensor<4x4xf64>
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
  func.func private @closed_call(%arg0: tensor<2x3xf64>, %arg1: tensor<i64>, %arg2: tensor<4x4xf64>) -> (tensor<i64>, tensor<4x4xf64>) {
    %c = stablehlo.constant dense<1> : tensor<i64>
    %0 = stablehlo.add %arg1, %c : tensor<i64>
    %1 = call @dynamic_index_in_dim(%arg0, %arg1) : (tensor<2x3xf64>, tensor<i64>) -> tensor<3xf64>
    %2 = stablehlo.slice %1 [0:1] : (tensor<3xf64>) -> tensor<1xf64>
    %3 = stablehlo.reshape %2 : (tensor<1xf64>) -> tensor<f64>
    %4 = stablehlo.slice %1 [1:2] : (tensor<3xf64>) -> tensor<1xf64>
    %5 = stablehlo.reshape %4 : (tensor<1xf64>) -> tensor<f64>
    %6 = stablehlo.slice %1 [2:3] : (tensor<3xf64>) -> tensor<1xf64>
    %7 = stablehlo.reshape %6 : (tensor<1xf64>) -> tensor<f64>
    %8 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %9 = stablehlo.multiply %8, %arg2 : tensor<4x4xf64>
    %10 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %11 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %12 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %13 = stablehlo.add %10, %12 : tensor<4x4xi64>
    %14 = stablehlo.compare EQ, %13, %11, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %15 = stablehlo.convert %14 : (tensor<4x4xi1>) -> tensor<4x4xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %16 = stablehlo.pad %9, %cst, low = [0, 0], high = [4, 0], interior = [0, 0] : (tensor<4x4xf64>, tensor<f64>) -> tensor<8x4xf64>
    %c_1 = stablehlo.constant dense<4> : tensor<i64>
    %c_2 = stablehlo.constant dense<0> : tensor<i64>
    %17 = stablehlo.dynamic_update_slice %16, %15, %c_1, %c_2 : (tensor<8x4xf64>, tensor<4x4xf64>, tensor<i64>, tensor<i64>) -> tensor<8x4xf64>
    %18:2 = stablehlo.custom_call @lapack_dgeqrf_ffi(%17) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m]) {i=8, j=4, k=8, l=4, m=4}, custom>} : (tensor<8x4xf64>) -> (tensor<8x4xf64>, tensor<4xf64>)
    %19 = stablehlo.custom_call @lapack_dorgqr_ffi(%18#0, %18#1) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k])->([l, m]) {i=8, j=4, k=4, l=8, m=4}, custom>} : (tensor<8x4xf64>, tensor<4xf64>) -> tensor<8x4xf64>
    %20 = stablehlo.slice %18#0 [0:4, 0:4] : (tensor<8x4xf64>) -> tensor<4x4xf64>
    %21 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %c_3 = stablehlo.constant dense<-1> : tensor<i64>
    %22 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %23 = stablehlo.add %21, %22 : tensor<4x4xi64>
    %24 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %25 = stablehlo.compare GE, %23, %24, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %26 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %27 = stablehlo.select %25, %26, %20 : tensor<4x4xi1>, tensor<4x4xf64>
    %28 = stablehlo.slice %19 [0:4, 0:4] : (tensor<8x4xf64>) -> tensor<4x4xf64>
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
    %36 = call @_where_1(%35, %28, %c_7) : (tensor<4x4xi1>, tensor<4x4xf64>, tensor<i64>) -> tensor<4x4xf64>
    %c_8 = stablehlo.constant dense<4> : tensor<i64>
    %c_9 = stablehlo.constant dense<0> : tensor<i64>
    %37 = stablehlo.dynamic_slice %19, %c_8, %c_9, sizes = [4, 4] : (tensor<8x4xf64>, tensor<i64>, tensor<i64>) -> tensor<4x4xf64>
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
    %45 = call @_where_1(%44, %37, %c_12) : (tensor<4x4xi1>, tensor<4x4xf64>, tensor<i64>) -> tensor<4x4xf64>
    %46 = stablehlo.transpose %45, dims = [1, 0] : (tensor<4x4xf64>) -> tensor<4x4xf64>
    %47 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %48 = stablehlo.multiply %47, %arg2 : tensor<4x4xf64>
    %49 = stablehlo.dot_general %36, %46, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
    %50 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %51 = stablehlo.multiply %50, %49 : tensor<4x4xf64>
    %52 = stablehlo.add %48, %51 : tensor<4x4xf64>
    return %0, %52 : tensor<i64>, tensor<4x4xf64>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<2x3xf64>, %arg1: tensor<i64>) -> tensor<3xf64> {
    %c = stablehlo.constant dense<0> : tensor<i64>
    %0 = stablehlo.compare LT, %arg1, %c, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %1 = stablehlo.convert %arg1 : tensor<i64>
    %c_0 = stablehlo.constant dense<2> : tensor<i64>
    %2 = stablehlo.add %1, %c_0 : tensor<i64>
    %3 = stablehlo.select %0, %2, %arg1 : tensor<i1>, tensor<i64>
    %c_1 = stablehlo.constant dense<0> : tensor<i64>
    %4 = stablehlo.dynamic_slice %arg0, %3, %c_1, sizes = [1, 3] : (tensor<2x3xf64>, tensor<i64>, tensor<i64>) -> tensor<1x3xf64>
    %5 = stablehlo.reshape %4 : (tensor<1x3xf64>) -> tensor<3xf64>
    return %5 : tensor<3xf64>
  }
  func.func private @_where_1(%arg0: tensor<4x4xi1>, %arg1: tensor<4x4xf64>, %arg2: tensor<i64>) -> tensor<4x4xf64> {
    %0 = stablehlo.convert %arg2 : (tensor<i64>) -> tensor<f64>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<4x4xi1>, tensor<4x4xf64>
    return %2 : tensor<4x4xf64>
  }
  func.func private @closed_call_2(%arg0: tensor<4x3xf64>, %arg1: tensor<f64>, %arg2: tensor<i64>, %arg3: tensor<4x4xf64>, %arg4: tensor<i1>) -> (tensor<i64>, tensor<4x4xf64>, tensor<i1>) {
    %c = stablehlo.constant dense<1> : tensor<i64>
    %0 = stablehlo.add %arg2, %c : tensor<i64>
    %1 = call @dynamic_index_in_dim_3(%arg0, %arg2) : (tensor<4x3xf64>, tensor<i64>) -> tensor<3xf64>
    %2 = stablehlo.slice %1 [0:1] : (tensor<3xf64>) -> tensor<1xf64>
    %3 = stablehlo.reshape %2 : (tensor<1xf64>) -> tensor<f64>
    %4 = stablehlo.slice %1 [1:2] : (tensor<3xf64>) -> tensor<1xf64>
    %5 = stablehlo.reshape %4 : (tensor<1xf64>) -> tensor<f64>
    %6 = stablehlo.slice %1 [2:3] : (tensor<3xf64>) -> tensor<1xf64>
    %7 = stablehlo.reshape %6 : (tensor<1xf64>) -> tensor<f64>
    %8 = stablehlo.transpose %arg3, dims = [1, 0] : (tensor<4x4xf64>) -> tensor<4x4xf64>
    %9 = stablehlo.dot_general %8, %arg3, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
    %10 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %11 = stablehlo.multiply %10, %9 : tensor<4x4xf64>
    %12 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %13 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %14 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %15 = stablehlo.add %12, %14 : tensor<4x4xi64>
    %16 = stablehlo.compare EQ, %15, %13, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %17 = stablehlo.convert %16 : (tensor<4x4xi1>) -> tensor<4x4xf64>
    %18 = stablehlo.add %11, %17 : tensor<4x4xf64>
    %19 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %20 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %c_1 = stablehlo.constant dense<0> : tensor<i64>
    %21 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %22 = stablehlo.add %19, %21 : tensor<4x4xi64>
    %23 = stablehlo.compare EQ, %22, %20, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %24 = stablehlo.convert %23 : (tensor<4x4xi1>) -> tensor<4x4xf64>
    %25 = stablehlo.iota dim = 0 : tensor<4x4xi32>
    %c_2 = stablehlo.constant dense<4> : tensor<i32>
    %26 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<4x4xi32>
    %27 = stablehlo.compare LT, %25, %26, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
    %28 = stablehlo.iota dim = 1 : tensor<4x4xi32>
    %c_3 = stablehlo.constant dense<4> : tensor<i32>
    %29 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<4x4xi32>
    %30 = stablehlo.compare LT, %28, %29, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
    %31 = stablehlo.and %27, %30 : tensor<4x4xi1>
    %32 = call @_where_4(%31, %18, %24) : (tensor<4x4xi1>, tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
    %33:2 = stablehlo.custom_call @lapack_dpotrf_ffi(%32) {backend_config = "", mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], []) {i=4, j=4, k=4, l=4}, custom>} : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<i32>)
    %c_4 = stablehlo.constant dense<0> : tensor<i32>
    %34 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<i32>
    %35 = stablehlo.compare EQ, %33#1, %34, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %36 = stablehlo.broadcast_in_dim %35, dims = [] : (tensor<i1>) -> tensor<1x1xi1>
    %cst = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>
    %37 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %38 = stablehlo.broadcast_in_dim %36, dims = [0, 1] : (tensor<1x1xi1>) -> tensor<4x4xi1>
    %39 = stablehlo.select %38, %33#0, %37 : tensor<4x4xi1>, tensor<4x4xf64>
    %40 = stablehlo.iota dim = 0 : tensor<4x4xi64>
    %c_5 = stablehlo.constant dense<0> : tensor<i64>
    %41 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i64>) -> tensor<4x4xi64>
    %42 = stablehlo.add %40, %41 : tensor<4x4xi64>
    %43 = stablehlo.iota dim = 1 : tensor<4x4xi64>
    %44 = stablehlo.compare GE, %42, %43, SIGNED : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %45 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %46 = stablehlo.select %44, %39, %45 : tensor<4x4xi1>, tensor<4x4xf64>
    %47 = stablehlo.transpose %arg3, dims = [1, 0] : (tensor<4x4xf64>) -> tensor<4x4xf64>
    %48 = stablehlo.custom_call @lapack_dtrsm_ffi(%46, %47) {backend_config = "", mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=4, m=4, n=4}, custom>} : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
    %49 = stablehlo.custom_call @lapack_dtrsm_ffi(%46, %48) {backend_config = "", mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=4, m=4, n=4}, custom>} : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
    %50 = stablehlo.transpose %49, dims = [1, 0] : (tensor<4x4xf64>) -> tensor<4x4xf64>
    %51 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %52 = stablehlo.multiply %51, %arg3 : tensor<4x4xf64>
    %53 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f64>) -> tensor<4x4xf64>
    %54 = stablehlo.multiply %53, %50 : tensor<4x4xf64>
    %55 = stablehlo.add %52, %54 : tensor<4x4xf64>
    %56 = stablehlo.subtract %55, %arg3 : tensor<4x4xf64>
    %57 = call @norm_5(%56) : (tensor<4x4xf64>) -> tensor<f64>
    %58 = stablehlo.convert %arg1 : tensor<f64>
    %59 = stablehlo.compare GT, %57, %58, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
    return %0, %55, %59 : tensor<i64>, tensor<4x4xf64>, tensor<i1>
  }
  func.func private @dynamic_index_in_dim_3(%arg0: tensor<4x3xf64>, %arg1: tensor<i64>) -> tensor<3xf64> {
    %c = stablehlo.constant dense<0> : tensor<i64>
    %0 = stablehlo.compare LT, %arg1, %c, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %1 = stablehlo.convert %arg1 : tensor<i64>
    %c_0 = stablehlo.constant dense<4> : tensor<i64>
    %2 = stablehlo.add %1, %c_0 : tensor<i64>
    %3 = stablehlo.select %0, %2, %arg1 : tensor<i1>, tensor<i64>
    %c_1 = stablehlo.constant dense<0> : tensor<i64>
    %4 = stablehlo.dynamic_slice %arg0, %3, %c_1, sizes = [1, 3] : (tensor<4x3xf64>, tensor<i64>, tensor<i64>) -> tensor<1x3xf64>
    %5 = stablehlo.reshape %4 : (tensor<1x3xf64>) -> tensor<3xf64>
    return %5 : tensor<3xf64>
  }
  func.func private @_where_4(%arg0: tensor<4x4xi1>, %arg1: tensor<4x4xf64>, %arg2: tensor<4x4xf64>) -> tensor<4x4xf64> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4x4xi1>, tensor<4x4xf64>
    return %0 : tensor<4x4xf64>
  }
  func.func private @norm_5(%arg0: tensor<4x4xf64>) -> tensor<f64> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<4x4xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x4xf64>, tensor<f64>) -> tensor<f64>
    %2 = stablehlo.sqrt %1 : tensor<f64>
    return %2 : tensor<f64>
  }
  func.func private @_where_6(%arg0: tensor<4x4xi1>, %arg1: tensor<4x4xf64>, %arg2: tensor<4x4xf64>) -> tensor<4x4xf64> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4x4xi1>, tensor<4x4xf64>
    return %0 : tensor<4x4xf64>
  }
  func.func private @norm_7(%arg0: tensor<4x4xf64>) -> tensor<f64> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<4x4xf64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x4xf64>, tensor<f64>) -> tensor<f64>
    %2 = stablehlo.sqrt %1 : tensor<f64>
    return %2 : tensor<f64>
  }
}
