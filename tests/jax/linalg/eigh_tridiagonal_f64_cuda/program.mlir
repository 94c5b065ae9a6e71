module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xf64>) -> (tensor<4xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:1, 0:4] : (tensor<4x4xf64>) -> tensor<1x4xf64>
    %1 = stablehlo.reshape %0 : (tensor<1x4xf64>) -> tensor<4xf64>
    %2 = stablehlo.slice %arg0 [1:2, 0:3] : (tensor<4x4xf64>) -> tensor<1x3xf64>
    %3 = stablehlo.reshape %2 : (tensor<1x3xf64>) -> tensor<3xf64>
    %4 = call @eigh_tridiagonal(%1, %3) : (tensor<4xf64>, tensor<3xf64>) -> tensor<4xf64>
    return %4 : tensor<4xf64>
  }
  func.func private @eigh_tridiagonal(%arg0: tensor<4xf64>, %arg1: tensor<3xf64>) -> tensor<4xf64> {
    %0 = stablehlo.abs %arg1 : tensor<3xf64>
    %1 = chlo.square %arg1 : tensor<3xf64> -> tensor<3xf64>
    %2 = stablehlo.slice %0 [0:1] : (tensor<3xf64>) -> tensor<1xf64>
    %3 = stablehlo.slice %0 [0:2] : (tensor<3xf64>) -> tensor<2xf64>
    %4 = stablehlo.slice %0 [1:3] : (tensor<3xf64>) -> tensor<2xf64>
    %5 = stablehlo.add %3, %4 : tensor<2xf64>
    %6 = stablehlo.slice %0 [2:3] : (tensor<3xf64>) -> tensor<1xf64>
    %7 = stablehlo.concatenate %2, %5, %6, dim = 0 : (tensor<1xf64>, tensor<2xf64>, tensor<1xf64>) -> tensor<4xf64>
    %8 = stablehlo.add %arg0, %7 : tensor<4xf64>
    %cst = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
    %9 = stablehlo.reduce(%8 init: %cst) applies stablehlo.maximum across dimensions = [0] : (tensor<4xf64>, tensor<f64>) -> tensor<f64>
    %10 = stablehlo.subtract %arg0, %7 : tensor<4xf64>
    %cst_0 = stablehlo.constant dense<0x7FF0000000000000> : tensor<f64>
    %11 = stablehlo.reduce(%10 init: %cst_0) applies stablehlo.minimum across dimensions = [0] : (tensor<4xf64>, tensor<f64>) -> tensor<f64>
    %12 = stablehlo.abs %11 : tensor<f64>
    %13 = stablehlo.abs %9 : tensor<f64>
    %14 = stablehlo.maximum %12, %13 : tensor<f64>
    %cst_1 = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
    %15 = stablehlo.reduce(%1 init: %cst_1) applies stablehlo.maximum across dimensions = [0] : (tensor<3xf64>, tensor<f64>) -> tensor<f64>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f64>
    %16 = stablehlo.maximum %cst_2, %15 : tensor<f64>
    %cst_3 = stablehlo.constant dense<2.2250738585072019E-308> : tensor<f64>
    %17 = stablehlo.multiply %cst_3, %16 : tensor<f64>
    %18 = stablehlo.slice %0 [0:1] : (tensor<3xf64>) -> tensor<1xf64>
    %19 = stablehlo.reshape %18 : (tensor<1xf64>) -> tensor<f64>
    %cst_4 = stablehlo.constant dense<2.2204460492503131E-16> : tensor<f64>
    %20 = stablehlo.multiply %cst_4, %19 : tensor<f64>
    %21 = chlo.square %20 : tensor<f64> -> tensor<f64>
    %cst_5 = stablehlo.constant dense<2.2204460492503131E-16> : tensor<f64>
    %22 = stablehlo.multiply %cst_5, %14 : tensor<f64>
    %23 = stablehlo.iota dim = 0 : tensor<4xi32>
    %cst_6 = stablehlo.constant dense<4.000000e+00> : tensor<f64>
    %cst_7 = stablehlo.constant dense<2.100000e+00> : tensor<f64>
    %24 = stablehlo.multiply %cst_6, %cst_7 : tensor<f64>
    %cst_8 = stablehlo.constant dense<2.2204460492503131E-16> : tensor<f64>
    %25 = stablehlo.multiply %24, %cst_8 : tensor<f64>
    %26 = stablehlo.multiply %25, %14 : tensor<f64>
    %27 = stablehlo.subtract %11, %26 : tensor<f64>
    %cst_9 = stablehlo.constant dense<4.200000e+00> : tensor<f64>
    %28 = stablehlo.multiply %cst_9, %17 : tensor<f64>
    %29 = stablehlo.subtract %27, %28 : tensor<f64>
    %30 = stablehlo.add %9, %26 : tensor<f64>
    %cst_10 = stablehlo.constant dense<2.100000e+00> : tensor<f64>
    %31 = stablehlo.multiply %cst_10, %17 : tensor<f64>
    %32 = stablehlo.add %30, %31 : tensor<f64>
    %33 = stablehlo.broadcast_in_dim %29, dims = [] : (tensor<f64>) -> tensor<4xf64>
    %34 = stablehlo.broadcast_in_dim %32, dims = [] : (tensor<f64>) -> tensor<4xf64>
    %35 = stablehlo.add %34, %33 : tensor<4xf64>
    %cst_11 = stablehlo.constant dense<5.000000e-01> : tensor<f64>
    %36 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f64>) -> tensor<4xf64>
    %37 = stablehlo.multiply %36, %35 : tensor<4xf64>
    %38 = stablehlo.broadcast_in_dim %17, dims = [] : (tensor<f64>) -> tensor<4xf64>
    %39 = stablehlo.broadcast_in_dim %21, dims = [] : (tensor<f64>) -> tensor<4xf64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %40:10 = stablehlo.while(%iterArg = %22, %iterArg_12 = %arg0, %iterArg_13 = %39, %iterArg_14 = %1, %iterArg_15 = %38, %iterArg_16 = %23, %iterArg_17 = %c, %iterArg_18 = %33, %iterArg_19 = %37, %iterArg_20 = %34) : tensor<f64>, tensor<4xf64>, tensor<4xf64>, tensor<3xf64>, tensor<4xf64>, tensor<4xi32>, tensor<i64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>
    cond {
      %c_21 = stablehlo.constant dense<53> : tensor<i64>
      %41 = stablehlo.compare LT, %iterArg_17, %c_21, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %42 = stablehlo.subtract %iterArg_20, %iterArg_18 : tensor<4xf64>
      %cst_22 = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
      %43 = stablehlo.reduce(%42 init: %cst_22) applies stablehlo.maximum across dimensions = [0] : (tensor<4xf64>, tensor<f64>) -> tensor<f64>
      %44 = stablehlo.compare LT, %iterArg, %43, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %c_23 = stablehlo.constant dense<false> : tensor<i1>
      %45 = stablehlo.broadcast_in_dim %c_23, dims = [] : (tensor<i1>) -> tensor<i1>
      %46 = stablehlo.compare NE, %41, %45, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %47 = stablehlo.convert %46 : tensor<i1>
      %48 = stablehlo.and %47, %44 : tensor<i1>
      stablehlo.return %48 : tensor<i1>
    } do {
      %c_21 = stablehlo.constant dense<0> : tensor<i32>
      %41 = stablehlo.broadcast_in_dim %c_21, dims = [] : (tensor<i32>) -> tensor<4xi32>
      %c_22 = stablehlo.constant dense<1> : tensor<i32>
      %42 = stablehlo.broadcast_in_dim %c_22, dims = [] : (tensor<i32>) -> tensor<4xi32>
      %43 = stablehlo.slice %iterArg_12 [0:1] : (tensor<4xf64>) -> tensor<1xf64>
      %44 = stablehlo.reshape %43 : (tensor<1xf64>) -> tensor<f64>
      %45 = stablehlo.broadcast_in_dim %44, dims = [] : (tensor<f64>) -> tensor<4xf64>
      %46 = stablehlo.subtract %45, %iterArg_19 : tensor<4xf64>
      %cst_23 = stablehlo.constant dense<0.000000e+00> : tensor<f64>
      %47 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f64>) -> tensor<4xf64>
      %48 = stablehlo.compare LT, %46, %47, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
      %49 = func.call @_where(%48, %42, %41) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
      %50 = stablehlo.slice %iterArg_12 [0:1] : (tensor<4xf64>) -> tensor<1xf64>
      %51 = stablehlo.reshape %50 : (tensor<1xf64>) -> tensor<f64>
      %52 = stablehlo.broadcast_in_dim %51, dims = [] : (tensor<f64>) -> tensor<4xf64>
      %53 = stablehlo.compare EQ, %52, %iterArg_19, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
      %54 = func.call @_where_0(%53, %iterArg_13, %46) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
      %55 = stablehlo.slice %iterArg_12 [1:2] : (tensor<4xf64>) -> tensor<1xf64>
      %56 = stablehlo.reshape %55 : (tensor<1xf64>) -> tensor<f64>
      %57 = stablehlo.slice %iterArg_14 [0:1] : (tensor<3xf64>) -> tensor<1xf64>
      %58 = stablehlo.reshape %57 : (tensor<1xf64>) -> tensor<f64>
      %59 = stablehlo.broadcast_in_dim %58, dims = [] : (tensor<f64>) -> tensor<4xf64>
      %60 = stablehlo.divide %59, %54 : tensor<4xf64>
      %61 = stablehlo.broadcast_in_dim %56, dims = [] : (tensor<f64>) -> tensor<4xf64>
      %62 = stablehlo.subtract %61, %60 : tensor<4xf64>
      %63 = stablehlo.subtract %62, %iterArg_19 : tensor<4xf64>
      %64 = stablehlo.compare LE, %63, %iterArg_15, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
      %c_24 = stablehlo.constant dense<1> : tensor<i32>
      %65 = stablehlo.broadcast_in_dim %c_24, dims = [] : (tensor<i32>) -> tensor<4xi32>
      %66 = stablehlo.add %49, %65 : tensor<4xi32>
      %67 = func.call @_where(%64, %66, %49) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
      %68 = stablehlo.compare LE, %63, %iterArg_15, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
      %69 = stablehlo.negate %iterArg_15 : tensor<4xf64>
      %70 = stablehlo.minimum %63, %69 : tensor<4xf64>
      %71 = func.call @_where_0(%68, %70, %63) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
      %72 = stablehlo.slice %iterArg_12 [2:3] : (tensor<4xf64>) -> tensor<1xf64>
      %73 = stablehlo.reshape %72 : (tensor<1xf64>) -> tensor<f64>
      %74 = stablehlo.slice %iterArg_14 [1:2] : (tensor<3xf64>) -> tensor<1xf64>
      %75 = stablehlo.reshape %74 : (tensor<1xf64>) -> tensor<f64>
      %76 = stablehlo.broadcast_in_dim %75, dims = [] : (tensor<f64>) -> tensor<4xf64>
      %77 = stablehlo.divide %76, %71 : tensor<4xf64>
      %78 = stablehlo.broadcast_in_dim %73, dims = [] : (tensor<f64>) -> tensor<4xf64>
      %79 = stablehlo.subtract %78, %77 : tensor<4xf64>
      %80 = stablehlo.subtract %79, %iterArg_19 : tensor<4xf64>
      %81 = stablehlo.compare LE, %80, %iterArg_15, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
      %c_25 = stablehlo.constant dense<1> : tensor<i32>
      %82 = stablehlo.broadcast_in_dim %c_25, dims = [] : (tensor<i32>) -> tensor<4xi32>
      %83 = stablehlo.add %67, %82 : tensor<4xi32>
      %84 = func.call @_where(%81, %83, %67) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
      %85 = stablehlo.compare LE, %80, %iterArg_15, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
      %86 = stablehlo.negate %iterArg_15 : tensor<4xf64>
      %87 = stablehlo.minimum %80, %86 : tensor<4xf64>
      %88 = func.call @_where_0(%85, %87, %80) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
      %89 = stablehlo.slice %iterArg_12 [3:4] : (tensor<4xf64>) -> tensor<1xf64>
      %90 = stablehlo.reshape %89 : (tensor<1xf64>) -> tensor<f64>
      %91 = stablehlo.slice %iterArg_14 [2:3] : (tensor<3xf64>) -> tensor<1xf64>
      %92 = stablehlo.reshape %91 : (tensor<1xf64>) -> tensor<f64>
      %93 = stablehlo.broadcast_in_dim %92, dims = [] : (tensor<f64>) -> tensor<4xf64>
      %94 = stablehlo.divide %93, %88 : tensor<4xf64>
      %95 = stablehlo.broadcast_in_dim %90, dims = [] : (tensor<f64>) -> tensor<4xf64>
      %96 = stablehlo.subtract %95, %94 : tensor<4xf64>
      %97 = stablehlo.subtract %96, %iterArg_19 : tensor<4xf64>
      %98 = stablehlo.compare LE, %97, %iterArg_15, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
      %c_26 = stablehlo.constant dense<1> : tensor<i32>
      %99 = stablehlo.broadcast_in_dim %c_26, dims = [] : (tensor<i32>) -> tensor<4xi32>
      %100 = stablehlo.add %84, %99 : tensor<4xi32>
      %101 = func.call @_where(%98, %100, %84) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
      %102 = stablehlo.compare LE, %97, %iterArg_15, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
      %103 = stablehlo.negate %iterArg_15 : tensor<4xf64>
      %104 = stablehlo.minimum %97, %103 : tensor<4xf64>
      %105 = func.call @_where_0(%102, %104, %97) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
      %c_27 = stablehlo.constant dense<4> : tensor<i64>
      %106:7 = stablehlo.while(%iterArg_30 = %iterArg_12, %iterArg_31 = %iterArg_14, %iterArg_32 = %iterArg_19, %iterArg_33 = %iterArg_15, %iterArg_34 = %c_27, %iterArg_35 = %105, %iterArg_36 = %101) : tensor<4xf64>, tensor<3xf64>, tensor<4xf64>, tensor<4xf64>, tensor<i64>, tensor<4xf64>, tensor<4xi32>
      cond {
        %c_37 = stablehlo.constant dense<4> : tensor<i64>
        %115 = stablehlo.compare LT, %iterArg_34, %c_37, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        stablehlo.return %115 : tensor<i1>
      } do {
        %c_37 = stablehlo.constant dense<0> : tensor<i64>
        %115 = stablehlo.add %iterArg_34, %c_37 : tensor<i64>
        %c_38 = stablehlo.constant dense<0> : tensor<i64>
        %116 = stablehlo.compare LT, %115, %c_38, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %117 = stablehlo.convert %115 : tensor<i64>
        %c_39 = stablehlo.constant dense<4> : tensor<i64>
        %118 = stablehlo.add %117, %c_39 : tensor<i64>
        %119 = stablehlo.select %116, %118, %115 : tensor<i1>, tensor<i64>
        %120 = stablehlo.dynamic_slice %iterArg_30, %119, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %121 = stablehlo.reshape %120 : (tensor<1xf64>) -> tensor<f64>
        %c_40 = stablehlo.constant dense<1> : tensor<i64>
        %122 = stablehlo.subtract %115, %c_40 : tensor<i64>
        %c_41 = stablehlo.constant dense<0> : tensor<i64>
        %123 = stablehlo.compare LT, %122, %c_41, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %124 = stablehlo.convert %122 : tensor<i64>
        %c_42 = stablehlo.constant dense<3> : tensor<i64>
        %125 = stablehlo.add %124, %c_42 : tensor<i64>
        %126 = stablehlo.select %123, %125, %122 : tensor<i1>, tensor<i64>
        %127 = stablehlo.dynamic_slice %iterArg_31, %126, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %128 = stablehlo.reshape %127 : (tensor<1xf64>) -> tensor<f64>
        %129 = stablehlo.broadcast_in_dim %128, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %130 = stablehlo.divide %129, %iterArg_35 : tensor<4xf64>
        %131 = stablehlo.broadcast_in_dim %121, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %132 = stablehlo.subtract %131, %130 : tensor<4xf64>
        %133 = stablehlo.subtract %132, %iterArg_32 : tensor<4xf64>
        %134 = stablehlo.compare LE, %133, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_43 = stablehlo.constant dense<1> : tensor<i32>
        %135 = stablehlo.broadcast_in_dim %c_43, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %136 = stablehlo.add %iterArg_36, %135 : tensor<4xi32>
        %137 = func.call @_where(%134, %136, %iterArg_36) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %138 = stablehlo.compare LE, %133, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %139 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %140 = stablehlo.minimum %133, %139 : tensor<4xf64>
        %141 = func.call @_where_0(%138, %140, %133) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_44 = stablehlo.constant dense<1> : tensor<i64>
        %142 = stablehlo.add %iterArg_34, %c_44 : tensor<i64>
        %c_45 = stablehlo.constant dense<0> : tensor<i64>
        %143 = stablehlo.compare LT, %142, %c_45, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %144 = stablehlo.convert %142 : tensor<i64>
        %c_46 = stablehlo.constant dense<4> : tensor<i64>
        %145 = stablehlo.add %144, %c_46 : tensor<i64>
        %146 = stablehlo.select %143, %145, %142 : tensor<i1>, tensor<i64>
        %147 = stablehlo.dynamic_slice %iterArg_30, %146, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %148 = stablehlo.reshape %147 : (tensor<1xf64>) -> tensor<f64>
        %c_47 = stablehlo.constant dense<1> : tensor<i64>
        %149 = stablehlo.subtract %142, %c_47 : tensor<i64>
        %c_48 = stablehlo.constant dense<0> : tensor<i64>
        %150 = stablehlo.compare LT, %149, %c_48, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %151 = stablehlo.convert %149 : tensor<i64>
        %c_49 = stablehlo.constant dense<3> : tensor<i64>
        %152 = stablehlo.add %151, %c_49 : tensor<i64>
        %153 = stablehlo.select %150, %152, %149 : tensor<i1>, tensor<i64>
        %154 = stablehlo.dynamic_slice %iterArg_31, %153, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %155 = stablehlo.reshape %154 : (tensor<1xf64>) -> tensor<f64>
        %156 = stablehlo.broadcast_in_dim %155, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %157 = stablehlo.divide %156, %141 : tensor<4xf64>
        %158 = stablehlo.broadcast_in_dim %148, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %159 = stablehlo.subtract %158, %157 : tensor<4xf64>
        %160 = stablehlo.subtract %159, %iterArg_32 : tensor<4xf64>
        %161 = stablehlo.compare LE, %160, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_50 = stablehlo.constant dense<1> : tensor<i32>
        %162 = stablehlo.broadcast_in_dim %c_50, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %163 = stablehlo.add %137, %162 : tensor<4xi32>
        %164 = func.call @_where(%161, %163, %137) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %165 = stablehlo.compare LE, %160, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %166 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %167 = stablehlo.minimum %160, %166 : tensor<4xf64>
        %168 = func.call @_where_0(%165, %167, %160) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_51 = stablehlo.constant dense<2> : tensor<i64>
        %169 = stablehlo.add %iterArg_34, %c_51 : tensor<i64>
        %c_52 = stablehlo.constant dense<0> : tensor<i64>
        %170 = stablehlo.compare LT, %169, %c_52, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %171 = stablehlo.convert %169 : tensor<i64>
        %c_53 = stablehlo.constant dense<4> : tensor<i64>
        %172 = stablehlo.add %171, %c_53 : tensor<i64>
        %173 = stablehlo.select %170, %172, %169 : tensor<i1>, tensor<i64>
        %174 = stablehlo.dynamic_slice %iterArg_30, %173, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %175 = stablehlo.reshape %174 : (tensor<1xf64>) -> tensor<f64>
        %c_54 = stablehlo.constant dense<1> : tensor<i64>
        %176 = stablehlo.subtract %169, %c_54 : tensor<i64>
        %c_55 = stablehlo.constant dense<0> : tensor<i64>
        %177 = stablehlo.compare LT, %176, %c_55, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %178 = stablehlo.convert %176 : tensor<i64>
        %c_56 = stablehlo.constant dense<3> : tensor<i64>
        %179 = stablehlo.add %178, %c_56 : tensor<i64>
        %180 = stablehlo.select %177, %179, %176 : tensor<i1>, tensor<i64>
        %181 = stablehlo.dynamic_slice %iterArg_31, %180, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %182 = stablehlo.reshape %181 : (tensor<1xf64>) -> tensor<f64>
        %183 = stablehlo.broadcast_in_dim %182, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %184 = stablehlo.divide %183, %168 : tensor<4xf64>
        %185 = stablehlo.broadcast_in_dim %175, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %186 = stablehlo.subtract %185, %184 : tensor<4xf64>
        %187 = stablehlo.subtract %186, %iterArg_32 : tensor<4xf64>
        %188 = stablehlo.compare LE, %187, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_57 = stablehlo.constant dense<1> : tensor<i32>
        %189 = stablehlo.broadcast_in_dim %c_57, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %190 = stablehlo.add %164, %189 : tensor<4xi32>
        %191 = func.call @_where(%188, %190, %164) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %192 = stablehlo.compare LE, %187, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %193 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %194 = stablehlo.minimum %187, %193 : tensor<4xf64>
        %195 = func.call @_where_0(%192, %194, %187) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_58 = stablehlo.constant dense<3> : tensor<i64>
        %196 = stablehlo.add %iterArg_34, %c_58 : tensor<i64>
        %c_59 = stablehlo.constant dense<0> : tensor<i64>
        %197 = stablehlo.compare LT, %196, %c_59, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %198 = stablehlo.convert %196 : tensor<i64>
        %c_60 = stablehlo.constant dense<4> : tensor<i64>
        %199 = stablehlo.add %198, %c_60 : tensor<i64>
        %200 = stablehlo.select %197, %199, %196 : tensor<i1>, tensor<i64>
        %201 = stablehlo.dynamic_slice %iterArg_30, %200, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %202 = stablehlo.reshape %201 : (tensor<1xf64>) -> tensor<f64>
        %c_61 = stablehlo.constant dense<1> : tensor<i64>
        %203 = stablehlo.subtract %196, %c_61 : tensor<i64>
        %c_62 = stablehlo.constant dense<0> : tensor<i64>
        %204 = stablehlo.compare LT, %203, %c_62, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %205 = stablehlo.convert %203 : tensor<i64>
        %c_63 = stablehlo.constant dense<3> : tensor<i64>
        %206 = stablehlo.add %205, %c_63 : tensor<i64>
        %207 = stablehlo.select %204, %206, %203 : tensor<i1>, tensor<i64>
        %208 = stablehlo.dynamic_slice %iterArg_31, %207, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %209 = stablehlo.reshape %208 : (tensor<1xf64>) -> tensor<f64>
        %210 = stablehlo.broadcast_in_dim %209, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %211 = stablehlo.divide %210, %195 : tensor<4xf64>
        %212 = stablehlo.broadcast_in_dim %202, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %213 = stablehlo.subtract %212, %211 : tensor<4xf64>
        %214 = stablehlo.subtract %213, %iterArg_32 : tensor<4xf64>
        %215 = stablehlo.compare LE, %214, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_64 = stablehlo.constant dense<1> : tensor<i32>
        %216 = stablehlo.broadcast_in_dim %c_64, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %217 = stablehlo.add %191, %216 : tensor<4xi32>
        %218 = func.call @_where(%215, %217, %191) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %219 = stablehlo.compare LE, %214, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %220 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %221 = stablehlo.minimum %214, %220 : tensor<4xf64>
        %222 = func.call @_where_0(%219, %221, %214) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_65 = stablehlo.constant dense<4> : tensor<i64>
        %223 = stablehlo.add %iterArg_34, %c_65 : tensor<i64>
        %c_66 = stablehlo.constant dense<0> : tensor<i64>
        %224 = stablehlo.compare LT, %223, %c_66, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %225 = stablehlo.convert %223 : tensor<i64>
        %c_67 = stablehlo.constant dense<4> : tensor<i64>
        %226 = stablehlo.add %225, %c_67 : tensor<i64>
        %227 = stablehlo.select %224, %226, %223 : tensor<i1>, tensor<i64>
        %228 = stablehlo.dynamic_slice %iterArg_30, %227, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %229 = stablehlo.reshape %228 : (tensor<1xf64>) -> tensor<f64>
        %c_68 = stablehlo.constant dense<1> : tensor<i64>
        %230 = stablehlo.subtract %223, %c_68 : tensor<i64>
        %c_69 = stablehlo.constant dense<0> : tensor<i64>
        %231 = stablehlo.compare LT, %230, %c_69, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %232 = stablehlo.convert %230 : tensor<i64>
        %c_70 = stablehlo.constant dense<3> : tensor<i64>
        %233 = stablehlo.add %232, %c_70 : tensor<i64>
        %234 = stablehlo.select %231, %233, %230 : tensor<i1>, tensor<i64>
        %235 = stablehlo.dynamic_slice %iterArg_31, %234, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %236 = stablehlo.reshape %235 : (tensor<1xf64>) -> tensor<f64>
        %237 = stablehlo.broadcast_in_dim %236, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %238 = stablehlo.divide %237, %222 : tensor<4xf64>
        %239 = stablehlo.broadcast_in_dim %229, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %240 = stablehlo.subtract %239, %238 : tensor<4xf64>
        %241 = stablehlo.subtract %240, %iterArg_32 : tensor<4xf64>
        %242 = stablehlo.compare LE, %241, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_71 = stablehlo.constant dense<1> : tensor<i32>
        %243 = stablehlo.broadcast_in_dim %c_71, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %244 = stablehlo.add %218, %243 : tensor<4xi32>
        %245 = func.call @_where(%242, %244, %218) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %246 = stablehlo.compare LE, %241, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %247 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %248 = stablehlo.minimum %241, %247 : tensor<4xf64>
        %249 = func.call @_where_0(%246, %248, %241) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_72 = stablehlo.constant dense<5> : tensor<i64>
        %250 = stablehlo.add %iterArg_34, %c_72 : tensor<i64>
        %c_73 = stablehlo.constant dense<0> : tensor<i64>
        %251 = stablehlo.compare LT, %250, %c_73, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %252 = stablehlo.convert %250 : tensor<i64>
        %c_74 = stablehlo.constant dense<4> : tensor<i64>
        %253 = stablehlo.add %252, %c_74 : tensor<i64>
        %254 = stablehlo.select %251, %253, %250 : tensor<i1>, tensor<i64>
        %255 = stablehlo.dynamic_slice %iterArg_30, %254, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %256 = stablehlo.reshape %255 : (tensor<1xf64>) -> tensor<f64>
        %c_75 = stablehlo.constant dense<1> : tensor<i64>
        %257 = stablehlo.subtract %250, %c_75 : tensor<i64>
        %c_76 = stablehlo.constant dense<0> : tensor<i64>
        %258 = stablehlo.compare LT, %257, %c_76, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %259 = stablehlo.convert %257 : tensor<i64>
        %c_77 = stablehlo.constant dense<3> : tensor<i64>
        %260 = stablehlo.add %259, %c_77 : tensor<i64>
        %261 = stablehlo.select %258, %260, %257 : tensor<i1>, tensor<i64>
        %262 = stablehlo.dynamic_slice %iterArg_31, %261, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %263 = stablehlo.reshape %262 : (tensor<1xf64>) -> tensor<f64>
        %264 = stablehlo.broadcast_in_dim %263, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %265 = stablehlo.divide %264, %249 : tensor<4xf64>
        %266 = stablehlo.broadcast_in_dim %256, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %267 = stablehlo.subtract %266, %265 : tensor<4xf64>
        %268 = stablehlo.subtract %267, %iterArg_32 : tensor<4xf64>
        %269 = stablehlo.compare LE, %268, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_78 = stablehlo.constant dense<1> : tensor<i32>
        %270 = stablehlo.broadcast_in_dim %c_78, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %271 = stablehlo.add %245, %270 : tensor<4xi32>
        %272 = func.call @_where(%269, %271, %245) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %273 = stablehlo.compare LE, %268, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %274 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %275 = stablehlo.minimum %268, %274 : tensor<4xf64>
        %276 = func.call @_where_0(%273, %275, %268) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_79 = stablehlo.constant dense<6> : tensor<i64>
        %277 = stablehlo.add %iterArg_34, %c_79 : tensor<i64>
        %c_80 = stablehlo.constant dense<0> : tensor<i64>
        %278 = stablehlo.compare LT, %277, %c_80, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %279 = stablehlo.convert %277 : tensor<i64>
        %c_81 = stablehlo.constant dense<4> : tensor<i64>
        %280 = stablehlo.add %279, %c_81 : tensor<i64>
        %281 = stablehlo.select %278, %280, %277 : tensor<i1>, tensor<i64>
        %282 = stablehlo.dynamic_slice %iterArg_30, %281, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %283 = stablehlo.reshape %282 : (tensor<1xf64>) -> tensor<f64>
        %c_82 = stablehlo.constant dense<1> : tensor<i64>
        %284 = stablehlo.subtract %277, %c_82 : tensor<i64>
        %c_83 = stablehlo.constant dense<0> : tensor<i64>
        %285 = stablehlo.compare LT, %284, %c_83, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %286 = stablehlo.convert %284 : tensor<i64>
        %c_84 = stablehlo.constant dense<3> : tensor<i64>
        %287 = stablehlo.add %286, %c_84 : tensor<i64>
        %288 = stablehlo.select %285, %287, %284 : tensor<i1>, tensor<i64>
        %289 = stablehlo.dynamic_slice %iterArg_31, %288, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %290 = stablehlo.reshape %289 : (tensor<1xf64>) -> tensor<f64>
        %291 = stablehlo.broadcast_in_dim %290, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %292 = stablehlo.divide %291, %276 : tensor<4xf64>
        %293 = stablehlo.broadcast_in_dim %283, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %294 = stablehlo.subtract %293, %292 : tensor<4xf64>
        %295 = stablehlo.subtract %294, %iterArg_32 : tensor<4xf64>
        %296 = stablehlo.compare LE, %295, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_85 = stablehlo.constant dense<1> : tensor<i32>
        %297 = stablehlo.broadcast_in_dim %c_85, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %298 = stablehlo.add %272, %297 : tensor<4xi32>
        %299 = func.call @_where(%296, %298, %272) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %300 = stablehlo.compare LE, %295, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %301 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %302 = stablehlo.minimum %295, %301 : tensor<4xf64>
        %303 = func.call @_where_0(%300, %302, %295) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_86 = stablehlo.constant dense<7> : tensor<i64>
        %304 = stablehlo.add %iterArg_34, %c_86 : tensor<i64>
        %c_87 = stablehlo.constant dense<0> : tensor<i64>
        %305 = stablehlo.compare LT, %304, %c_87, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %306 = stablehlo.convert %304 : tensor<i64>
        %c_88 = stablehlo.constant dense<4> : tensor<i64>
        %307 = stablehlo.add %306, %c_88 : tensor<i64>
        %308 = stablehlo.select %305, %307, %304 : tensor<i1>, tensor<i64>
        %309 = stablehlo.dynamic_slice %iterArg_30, %308, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %310 = stablehlo.reshape %309 : (tensor<1xf64>) -> tensor<f64>
        %c_89 = stablehlo.constant dense<1> : tensor<i64>
        %311 = stablehlo.subtract %304, %c_89 : tensor<i64>
        %c_90 = stablehlo.constant dense<0> : tensor<i64>
        %312 = stablehlo.compare LT, %311, %c_90, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %313 = stablehlo.convert %311 : tensor<i64>
        %c_91 = stablehlo.constant dense<3> : tensor<i64>
        %314 = stablehlo.add %313, %c_91 : tensor<i64>
        %315 = stablehlo.select %312, %314, %311 : tensor<i1>, tensor<i64>
        %316 = stablehlo.dynamic_slice %iterArg_31, %315, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %317 = stablehlo.reshape %316 : (tensor<1xf64>) -> tensor<f64>
        %318 = stablehlo.broadcast_in_dim %317, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %319 = stablehlo.divide %318, %303 : tensor<4xf64>
        %320 = stablehlo.broadcast_in_dim %310, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %321 = stablehlo.subtract %320, %319 : tensor<4xf64>
        %322 = stablehlo.subtract %321, %iterArg_32 : tensor<4xf64>
        %323 = stablehlo.compare LE, %322, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_92 = stablehlo.constant dense<1> : tensor<i32>
        %324 = stablehlo.broadcast_in_dim %c_92, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %325 = stablehlo.add %299, %324 : tensor<4xi32>
        %326 = func.call @_where(%323, %325, %299) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %327 = stablehlo.compare LE, %322, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %328 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %329 = stablehlo.minimum %322, %328 : tensor<4xf64>
        %330 = func.call @_where_0(%327, %329, %322) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_93 = stablehlo.constant dense<8> : tensor<i64>
        %331 = stablehlo.add %iterArg_34, %c_93 : tensor<i64>
        %c_94 = stablehlo.constant dense<0> : tensor<i64>
        %332 = stablehlo.compare LT, %331, %c_94, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %333 = stablehlo.convert %331 : tensor<i64>
        %c_95 = stablehlo.constant dense<4> : tensor<i64>
        %334 = stablehlo.add %333, %c_95 : tensor<i64>
        %335 = stablehlo.select %332, %334, %331 : tensor<i1>, tensor<i64>
        %336 = stablehlo.dynamic_slice %iterArg_30, %335, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %337 = stablehlo.reshape %336 : (tensor<1xf64>) -> tensor<f64>
        %c_96 = stablehlo.constant dense<1> : tensor<i64>
        %338 = stablehlo.subtract %331, %c_96 : tensor<i64>
        %c_97 = stablehlo.constant dense<0> : tensor<i64>
        %339 = stablehlo.compare LT, %338, %c_97, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %340 = stablehlo.convert %338 : tensor<i64>
        %c_98 = stablehlo.constant dense<3> : tensor<i64>
        %341 = stablehlo.add %340, %c_98 : tensor<i64>
        %342 = stablehlo.select %339, %341, %338 : tensor<i1>, tensor<i64>
        %343 = stablehlo.dynamic_slice %iterArg_31, %342, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %344 = stablehlo.reshape %343 : (tensor<1xf64>) -> tensor<f64>
        %345 = stablehlo.broadcast_in_dim %344, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %346 = stablehlo.divide %345, %330 : tensor<4xf64>
        %347 = stablehlo.broadcast_in_dim %337, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %348 = stablehlo.subtract %347, %346 : tensor<4xf64>
        %349 = stablehlo.subtract %348, %iterArg_32 : tensor<4xf64>
        %350 = stablehlo.compare LE, %349, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_99 = stablehlo.constant dense<1> : tensor<i32>
        %351 = stablehlo.broadcast_in_dim %c_99, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %352 = stablehlo.add %326, %351 : tensor<4xi32>
        %353 = func.call @_where(%350, %352, %326) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %354 = stablehlo.compare LE, %349, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %355 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %356 = stablehlo.minimum %349, %355 : tensor<4xf64>
        %357 = func.call @_where_0(%354, %356, %349) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_100 = stablehlo.constant dense<9> : tensor<i64>
        %358 = stablehlo.add %iterArg_34, %c_100 : tensor<i64>
        %c_101 = stablehlo.constant dense<0> : tensor<i64>
        %359 = stablehlo.compare LT, %358, %c_101, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %360 = stablehlo.convert %358 : tensor<i64>
        %c_102 = stablehlo.constant dense<4> : tensor<i64>
        %361 = stablehlo.add %360, %c_102 : tensor<i64>
        %362 = stablehlo.select %359, %361, %358 : tensor<i1>, tensor<i64>
        %363 = stablehlo.dynamic_slice %iterArg_30, %362, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %364 = stablehlo.reshape %363 : (tensor<1xf64>) -> tensor<f64>
        %c_103 = stablehlo.constant dense<1> : tensor<i64>
        %365 = stablehlo.subtract %358, %c_103 : tensor<i64>
        %c_104 = stablehlo.constant dense<0> : tensor<i64>
        %366 = stablehlo.compare LT, %365, %c_104, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %367 = stablehlo.convert %365 : tensor<i64>
        %c_105 = stablehlo.constant dense<3> : tensor<i64>
        %368 = stablehlo.add %367, %c_105 : tensor<i64>
        %369 = stablehlo.select %366, %368, %365 : tensor<i1>, tensor<i64>
        %370 = stablehlo.dynamic_slice %iterArg_31, %369, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %371 = stablehlo.reshape %370 : (tensor<1xf64>) -> tensor<f64>
        %372 = stablehlo.broadcast_in_dim %371, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %373 = stablehlo.divide %372, %357 : tensor<4xf64>
        %374 = stablehlo.broadcast_in_dim %364, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %375 = stablehlo.subtract %374, %373 : tensor<4xf64>
        %376 = stablehlo.subtract %375, %iterArg_32 : tensor<4xf64>
        %377 = stablehlo.compare LE, %376, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_106 = stablehlo.constant dense<1> : tensor<i32>
        %378 = stablehlo.broadcast_in_dim %c_106, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %379 = stablehlo.add %353, %378 : tensor<4xi32>
        %380 = func.call @_where(%377, %379, %353) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %381 = stablehlo.compare LE, %376, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %382 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %383 = stablehlo.minimum %376, %382 : tensor<4xf64>
        %384 = func.call @_where_0(%381, %383, %376) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_107 = stablehlo.constant dense<10> : tensor<i64>
        %385 = stablehlo.add %iterArg_34, %c_107 : tensor<i64>
        %c_108 = stablehlo.constant dense<0> : tensor<i64>
        %386 = stablehlo.compare LT, %385, %c_108, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %387 = stablehlo.convert %385 : tensor<i64>
        %c_109 = stablehlo.constant dense<4> : tensor<i64>
        %388 = stablehlo.add %387, %c_109 : tensor<i64>
        %389 = stablehlo.select %386, %388, %385 : tensor<i1>, tensor<i64>
        %390 = stablehlo.dynamic_slice %iterArg_30, %389, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %391 = stablehlo.reshape %390 : (tensor<1xf64>) -> tensor<f64>
        %c_110 = stablehlo.constant dense<1> : tensor<i64>
        %392 = stablehlo.subtract %385, %c_110 : tensor<i64>
        %c_111 = stablehlo.constant dense<0> : tensor<i64>
        %393 = stablehlo.compare LT, %392, %c_111, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %394 = stablehlo.convert %392 : tensor<i64>
        %c_112 = stablehlo.constant dense<3> : tensor<i64>
        %395 = stablehlo.add %394, %c_112 : tensor<i64>
        %396 = stablehlo.select %393, %395, %392 : tensor<i1>, tensor<i64>
        %397 = stablehlo.dynamic_slice %iterArg_31, %396, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %398 = stablehlo.reshape %397 : (tensor<1xf64>) -> tensor<f64>
        %399 = stablehlo.broadcast_in_dim %398, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %400 = stablehlo.divide %399, %384 : tensor<4xf64>
        %401 = stablehlo.broadcast_in_dim %391, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %402 = stablehlo.subtract %401, %400 : tensor<4xf64>
        %403 = stablehlo.subtract %402, %iterArg_32 : tensor<4xf64>
        %404 = stablehlo.compare LE, %403, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_113 = stablehlo.constant dense<1> : tensor<i32>
        %405 = stablehlo.broadcast_in_dim %c_113, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %406 = stablehlo.add %380, %405 : tensor<4xi32>
        %407 = func.call @_where(%404, %406, %380) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %408 = stablehlo.compare LE, %403, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %409 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %410 = stablehlo.minimum %403, %409 : tensor<4xf64>
        %411 = func.call @_where_0(%408, %410, %403) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_114 = stablehlo.constant dense<11> : tensor<i64>
        %412 = stablehlo.add %iterArg_34, %c_114 : tensor<i64>
        %c_115 = stablehlo.constant dense<0> : tensor<i64>
        %413 = stablehlo.compare LT, %412, %c_115, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %414 = stablehlo.convert %412 : tensor<i64>
        %c_116 = stablehlo.constant dense<4> : tensor<i64>
        %415 = stablehlo.add %414, %c_116 : tensor<i64>
        %416 = stablehlo.select %413, %415, %412 : tensor<i1>, tensor<i64>
        %417 = stablehlo.dynamic_slice %iterArg_30, %416, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %418 = stablehlo.reshape %417 : (tensor<1xf64>) -> tensor<f64>
        %c_117 = stablehlo.constant dense<1> : tensor<i64>
        %419 = stablehlo.subtract %412, %c_117 : tensor<i64>
        %c_118 = stablehlo.constant dense<0> : tensor<i64>
        %420 = stablehlo.compare LT, %419, %c_118, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %421 = stablehlo.convert %419 : tensor<i64>
        %c_119 = stablehlo.constant dense<3> : tensor<i64>
        %422 = stablehlo.add %421, %c_119 : tensor<i64>
        %423 = stablehlo.select %420, %422, %419 : tensor<i1>, tensor<i64>
        %424 = stablehlo.dynamic_slice %iterArg_31, %423, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %425 = stablehlo.reshape %424 : (tensor<1xf64>) -> tensor<f64>
        %426 = stablehlo.broadcast_in_dim %425, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %427 = stablehlo.divide %426, %411 : tensor<4xf64>
        %428 = stablehlo.broadcast_in_dim %418, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %429 = stablehlo.subtract %428, %427 : tensor<4xf64>
        %430 = stablehlo.subtract %429, %iterArg_32 : tensor<4xf64>
        %431 = stablehlo.compare LE, %430, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_120 = stablehlo.constant dense<1> : tensor<i32>
        %432 = stablehlo.broadcast_in_dim %c_120, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %433 = stablehlo.add %407, %432 : tensor<4xi32>
        %434 = func.call @_where(%431, %433, %407) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %435 = stablehlo.compare LE, %430, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %436 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %437 = stablehlo.minimum %430, %436 : tensor<4xf64>
        %438 = func.call @_where_0(%435, %437, %430) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_121 = stablehlo.constant dense<12> : tensor<i64>
        %439 = stablehlo.add %iterArg_34, %c_121 : tensor<i64>
        %c_122 = stablehlo.constant dense<0> : tensor<i64>
        %440 = stablehlo.compare LT, %439, %c_122, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %441 = stablehlo.convert %439 : tensor<i64>
        %c_123 = stablehlo.constant dense<4> : tensor<i64>
        %442 = stablehlo.add %441, %c_123 : tensor<i64>
        %443 = stablehlo.select %440, %442, %439 : tensor<i1>, tensor<i64>
        %444 = stablehlo.dynamic_slice %iterArg_30, %443, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %445 = stablehlo.reshape %444 : (tensor<1xf64>) -> tensor<f64>
        %c_124 = stablehlo.constant dense<1> : tensor<i64>
        %446 = stablehlo.subtract %439, %c_124 : tensor<i64>
        %c_125 = stablehlo.constant dense<0> : tensor<i64>
        %447 = stablehlo.compare LT, %446, %c_125, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %448 = stablehlo.convert %446 : tensor<i64>
        %c_126 = stablehlo.constant dense<3> : tensor<i64>
        %449 = stablehlo.add %448, %c_126 : tensor<i64>
        %450 = stablehlo.select %447, %449, %446 : tensor<i1>, tensor<i64>
        %451 = stablehlo.dynamic_slice %iterArg_31, %450, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %452 = stablehlo.reshape %451 : (tensor<1xf64>) -> tensor<f64>
        %453 = stablehlo.broadcast_in_dim %452, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %454 = stablehlo.divide %453, %438 : tensor<4xf64>
        %455 = stablehlo.broadcast_in_dim %445, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %456 = stablehlo.subtract %455, %454 : tensor<4xf64>
        %457 = stablehlo.subtract %456, %iterArg_32 : tensor<4xf64>
        %458 = stablehlo.compare LE, %457, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_127 = stablehlo.constant dense<1> : tensor<i32>
        %459 = stablehlo.broadcast_in_dim %c_127, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %460 = stablehlo.add %434, %459 : tensor<4xi32>
        %461 = func.call @_where(%458, %460, %434) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %462 = stablehlo.compare LE, %457, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %463 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %464 = stablehlo.minimum %457, %463 : tensor<4xf64>
        %465 = func.call @_where_0(%462, %464, %457) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_128 = stablehlo.constant dense<13> : tensor<i64>
        %466 = stablehlo.add %iterArg_34, %c_128 : tensor<i64>
        %c_129 = stablehlo.constant dense<0> : tensor<i64>
        %467 = stablehlo.compare LT, %466, %c_129, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %468 = stablehlo.convert %466 : tensor<i64>
        %c_130 = stablehlo.constant dense<4> : tensor<i64>
        %469 = stablehlo.add %468, %c_130 : tensor<i64>
        %470 = stablehlo.select %467, %469, %466 : tensor<i1>, tensor<i64>
        %471 = stablehlo.dynamic_slice %iterArg_30, %470, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %472 = stablehlo.reshape %471 : (tensor<1xf64>) -> tensor<f64>
        %c_131 = stablehlo.constant dense<1> : tensor<i64>
        %473 = stablehlo.subtract %466, %c_131 : tensor<i64>
        %c_132 = stablehlo.constant dense<0> : tensor<i64>
        %474 = stablehlo.compare LT, %473, %c_132, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %475 = stablehlo.convert %473 : tensor<i64>
        %c_133 = stablehlo.constant dense<3> : tensor<i64>
        %476 = stablehlo.add %475, %c_133 : tensor<i64>
        %477 = stablehlo.select %474, %476, %473 : tensor<i1>, tensor<i64>
        %478 = stablehlo.dynamic_slice %iterArg_31, %477, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %479 = stablehlo.reshape %478 : (tensor<1xf64>) -> tensor<f64>
        %480 = stablehlo.broadcast_in_dim %479, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %481 = stablehlo.divide %480, %465 : tensor<4xf64>
        %482 = stablehlo.broadcast_in_dim %472, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %483 = stablehlo.subtract %482, %481 : tensor<4xf64>
        %484 = stablehlo.subtract %483, %iterArg_32 : tensor<4xf64>
        %485 = stablehlo.compare LE, %484, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_134 = stablehlo.constant dense<1> : tensor<i32>
        %486 = stablehlo.broadcast_in_dim %c_134, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %487 = stablehlo.add %461, %486 : tensor<4xi32>
        %488 = func.call @_where(%485, %487, %461) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %489 = stablehlo.compare LE, %484, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %490 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %491 = stablehlo.minimum %484, %490 : tensor<4xf64>
        %492 = func.call @_where_0(%489, %491, %484) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_135 = stablehlo.constant dense<14> : tensor<i64>
        %493 = stablehlo.add %iterArg_34, %c_135 : tensor<i64>
        %c_136 = stablehlo.constant dense<0> : tensor<i64>
        %494 = stablehlo.compare LT, %493, %c_136, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %495 = stablehlo.convert %493 : tensor<i64>
        %c_137 = stablehlo.constant dense<4> : tensor<i64>
        %496 = stablehlo.add %495, %c_137 : tensor<i64>
        %497 = stablehlo.select %494, %496, %493 : tensor<i1>, tensor<i64>
        %498 = stablehlo.dynamic_slice %iterArg_30, %497, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %499 = stablehlo.reshape %498 : (tensor<1xf64>) -> tensor<f64>
        %c_138 = stablehlo.constant dense<1> : tensor<i64>
        %500 = stablehlo.subtract %493, %c_138 : tensor<i64>
        %c_139 = stablehlo.constant dense<0> : tensor<i64>
        %501 = stablehlo.compare LT, %500, %c_139, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %502 = stablehlo.convert %500 : tensor<i64>
        %c_140 = stablehlo.constant dense<3> : tensor<i64>
        %503 = stablehlo.add %502, %c_140 : tensor<i64>
        %504 = stablehlo.select %501, %503, %500 : tensor<i1>, tensor<i64>
        %505 = stablehlo.dynamic_slice %iterArg_31, %504, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %506 = stablehlo.reshape %505 : (tensor<1xf64>) -> tensor<f64>
        %507 = stablehlo.broadcast_in_dim %506, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %508 = stablehlo.divide %507, %492 : tensor<4xf64>
        %509 = stablehlo.broadcast_in_dim %499, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %510 = stablehlo.subtract %509, %508 : tensor<4xf64>
        %511 = stablehlo.subtract %510, %iterArg_32 : tensor<4xf64>
        %512 = stablehlo.compare LE, %511, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_141 = stablehlo.constant dense<1> : tensor<i32>
        %513 = stablehlo.broadcast_in_dim %c_141, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %514 = stablehlo.add %488, %513 : tensor<4xi32>
        %515 = func.call @_where(%512, %514, %488) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %516 = stablehlo.compare LE, %511, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %517 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %518 = stablehlo.minimum %511, %517 : tensor<4xf64>
        %519 = func.call @_where_0(%516, %518, %511) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_142 = stablehlo.constant dense<15> : tensor<i64>
        %520 = stablehlo.add %iterArg_34, %c_142 : tensor<i64>
        %c_143 = stablehlo.constant dense<0> : tensor<i64>
        %521 = stablehlo.compare LT, %520, %c_143, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %522 = stablehlo.convert %520 : tensor<i64>
        %c_144 = stablehlo.constant dense<4> : tensor<i64>
        %523 = stablehlo.add %522, %c_144 : tensor<i64>
        %524 = stablehlo.select %521, %523, %520 : tensor<i1>, tensor<i64>
        %525 = stablehlo.dynamic_slice %iterArg_30, %524, sizes = [1] : (tensor<4xf64>, tensor<i64>) -> tensor<1xf64>
        %526 = stablehlo.reshape %525 : (tensor<1xf64>) -> tensor<f64>
        %c_145 = stablehlo.constant dense<1> : tensor<i64>
        %527 = stablehlo.subtract %520, %c_145 : tensor<i64>
        %c_146 = stablehlo.constant dense<0> : tensor<i64>
        %528 = stablehlo.compare LT, %527, %c_146, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        %529 = stablehlo.convert %527 : tensor<i64>
        %c_147 = stablehlo.constant dense<3> : tensor<i64>
        %530 = stablehlo.add %529, %c_147 : tensor<i64>
        %531 = stablehlo.select %528, %530, %527 : tensor<i1>, tensor<i64>
        %532 = stablehlo.dynamic_slice %iterArg_31, %531, sizes = [1] : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64>
        %533 = stablehlo.reshape %532 : (tensor<1xf64>) -> tensor<f64>
        %534 = stablehlo.broadcast_in_dim %533, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %535 = stablehlo.divide %534, %519 : tensor<4xf64>
        %536 = stablehlo.broadcast_in_dim %526, dims = [] : (tensor<f64>) -> tensor<4xf64>
        %537 = stablehlo.subtract %536, %535 : tensor<4xf64>
        %538 = stablehlo.subtract %537, %iterArg_32 : tensor<4xf64>
        %539 = stablehlo.compare LE, %538, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %c_148 = stablehlo.constant dense<1> : tensor<i32>
        %540 = stablehlo.broadcast_in_dim %c_148, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %541 = stablehlo.add %515, %540 : tensor<4xi32>
        %542 = func.call @_where(%539, %541, %515) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
        %543 = stablehlo.compare LE, %538, %iterArg_33, FLOAT : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
        %544 = stablehlo.negate %iterArg_33 : tensor<4xf64>
        %545 = stablehlo.minimum %538, %544 : tensor<4xf64>
        %546 = func.call @_where_0(%543, %545, %538) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
        %c_149 = stablehlo.constant dense<16> : tensor<i64>
        %547 = stablehlo.add %iterArg_34, %c_149 : tensor<i64>
        stablehlo.return %iterArg_30, %iterArg_31, %iterArg_32, %iterArg_33, %547, %546, %542 : tensor<4xf64>, tensor<3xf64>, tensor<4xf64>, tensor<4xf64>, tensor<i64>, tensor<4xf64>, tensor<4xi32>
      }
      %107 = stablehlo.compare LE, %106#6, %iterArg_16, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
      %108 = func.call @_where_0(%107, %iterArg_19, %iterArg_18) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
      %109 = stablehlo.compare GT, %106#6, %iterArg_16, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
      %110 = func.call @_where_0(%109, %iterArg_19, %iterArg_20) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
      %111 = stablehlo.add %108, %110 : tensor<4xf64>
      %cst_28 = stablehlo.constant dense<5.000000e-01> : tensor<f64>
      %112 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f64>) -> tensor<4xf64>
      %113 = stablehlo.multiply %112, %111 : tensor<4xf64>
      %c_29 = stablehlo.constant dense<1> : tensor<i64>
      %114 = stablehlo.add %iterArg_17, %c_29 : tensor<i64>
      stablehlo.return %iterArg, %iterArg_12, %iterArg_13, %iterArg_14, %iterArg_15, %iterArg_16, %114, %108, %113, %110 : tensor<f64>, tensor<4xf64>, tensor<4xf64>, tensor<3xf64>, tensor<4xf64>, tensor<4xi32>, tensor<i64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>
    }
    return %40#8 : tensor<4xf64>
  }
  func.func private @_where(%arg0: tensor<4xi1>, %arg1: tensor<4xi32>, %arg2: tensor<4xi32>) -> tensor<4xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4xi1>, tensor<4xi32>
    return %0 : tensor<4xi32>
  }
  func.func private @_where_0(%arg0: tensor<4xi1>, %arg1: tensor<4xf64>, %arg2: tensor<4xf64>) -> tensor<4xf64> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4xi1>, tensor<4xf64>
    return %0 : tensor<4xf64>
  }
}
