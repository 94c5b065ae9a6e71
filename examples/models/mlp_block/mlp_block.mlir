module @jit_mlp_block attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<32x64xf32>, %arg1: tensor<64x256xf32>, %arg2: tensor<256xf32>, %arg3: tensor<256x64xf32>, %arg4: tensor<64xf32>, %arg5: tensor<64xf32>, %arg6: tensor<64xf32>) -> (tensor<32x64xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<256xf32>) -> tensor<1x256xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x256xf32>) -> tensor<32x256xf32>
    %3 = stablehlo.add %0, %2 : tensor<32x256xf32>
    %4 = stablehlo.multiply %3, %3 : tensor<32x256xf32>
    %5 = stablehlo.multiply %4, %3 : tensor<32x256xf32>
    %cst = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<32x256xf32>
    %7 = stablehlo.multiply %6, %5 : tensor<32x256xf32>
    %8 = stablehlo.add %3, %7 : tensor<32x256xf32>
    %cst_0 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<32x256xf32>
    %10 = stablehlo.multiply %9, %8 : tensor<32x256xf32>
    %11 = stablehlo.tanh %10 : tensor<32x256xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<32x256xf32>
    %13 = stablehlo.add %12, %11 : tensor<32x256xf32>
    %cst_2 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<32x256xf32>
    %15 = stablehlo.multiply %14, %13 : tensor<32x256xf32>
    %16 = stablehlo.multiply %3, %15 : tensor<32x256xf32>
    %17 = stablehlo.dot_general %16, %arg3, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<32x256xf32>, tensor<256x64xf32>) -> tensor<32x64xf32>
    %18 = stablehlo.add %arg0, %17 : tensor<32x64xf32>
    %19 = stablehlo.broadcast_in_dim %arg4, dims = [1] : (tensor<64xf32>) -> tensor<1x64xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1] : (tensor<1x64xf32>) -> tensor<32x64xf32>
    %21 = stablehlo.add %18, %20 : tensor<32x64xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %22 = stablehlo.reduce(%21 init: %cst_3) applies stablehlo.add across dimensions = [1] : (tensor<32x64xf32>, tensor<f32>) -> tensor<32xf32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0] : (tensor<32xf32>) -> tensor<32x1xf32>
    %cst_4 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %24 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<32x1xf32>
    %25 = stablehlo.divide %23, %24 : tensor<32x1xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0, 1] : (tensor<32x1xf32>) -> tensor<32x64xf32>
    %27 = stablehlo.subtract %21, %26 : tensor<32x64xf32>
    %28 = chlo.square %27 : tensor<32x64xf32> -> tensor<32x64xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %29 = stablehlo.reduce(%28 init: %cst_5) applies stablehlo.add across dimensions = [1] : (tensor<32x64xf32>, tensor<f32>) -> tensor<32xf32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [0] : (tensor<32xf32>) -> tensor<32x1xf32>
    %cst_6 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %31 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<32x1xf32>
    %32 = stablehlo.divide %30, %31 : tensor<32x1xf32>
    %33 = stablehlo.broadcast_in_dim %25, dims = [0, 1] : (tensor<32x1xf32>) -> tensor<32x64xf32>
    %34 = stablehlo.subtract %21, %33 : tensor<32x64xf32>
    %cst_7 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %35 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<32x1xf32>
    %36 = stablehlo.add %32, %35 : tensor<32x1xf32>
    %37 = stablehlo.rsqrt %36 : tensor<32x1xf32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [0, 1] : (tensor<32x1xf32>) -> tensor<32x64xf32>
    %39 = stablehlo.multiply %34, %38 : tensor<32x64xf32>
    %40 = stablehlo.broadcast_in_dim %arg5, dims = [1] : (tensor<64xf32>) -> tensor<1x64xf32>
    %41 = stablehlo.broadcast_in_dim %40, dims = [0, 1] : (tensor<1x64xf32>) -> tensor<32x64xf32>
    %42 = stablehlo.multiply %39, %41 : tensor<32x64xf32>
    %43 = stablehlo.broadcast_in_dim %arg6, dims = [1] : (tensor<64xf32>) -> tensor<1x64xf32>
    %44 = stablehlo.broadcast_in_dim %43, dims = [0, 1] : (tensor<1x64xf32>) -> tensor<32x64xf32>
    %45 = stablehlo.add %42, %44 : tensor<32x64xf32>
    return %45 : tensor<32x64xf32>
  }
}
