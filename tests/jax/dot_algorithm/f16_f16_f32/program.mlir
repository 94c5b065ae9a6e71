module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x5xf32>, %arg1: tensor<5x4xf32>) -> (tensor<3x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<3x5xf32>) -> tensor<3x5xf16>
    %1 = stablehlo.convert %arg1 : (tensor<5x4xf32>) -> tensor<5x4xf16>
    %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT], algorithm = <lhs_precision_type = f16, rhs_precision_type = f16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<3x5xf16>, tensor<5x4xf16>) -> tensor<3x4xf32>
    return %2 : tensor<3x4xf32>
  }
}
