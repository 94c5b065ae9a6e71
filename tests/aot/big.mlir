// Work large enough to run on the thread team of NAME_run when
// num_threads > 1: a kernel of 512 x 512 points and a matrix product of
// 512 x 512 x 16 multiply-adds. tests/suite_aot.sh runs it on 1 and 3
// threads (same bits) and under ThreadSanitizer.
func.func @main(%x: tensor<512x512xf32>, %y: tensor<512x512xf32>, %w: tensor<512x16xf32>) -> (tensor<512x512xf32>, tensor<512x16xf32>) {
  %0 = stablehlo.multiply %x, %y : tensor<512x512xf32>
  %c = stablehlo.constant dense<1.0> : tensor<512x512xf32>
  %1 = stablehlo.add %0, %c : tensor<512x512xf32>
  %2 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<512x512xf32>, tensor<512x16xf32>) -> tensor<512x16xf32>
  return %1, %2 : tensor<512x512xf32>, tensor<512x16xf32>
}
