// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @fft_op_test_fft_1d_c128() {
  %operand = stablehlo.constant dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f64>>
  %result = stablehlo.fft %operand, type = FFT, length = [2] : (tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>
  check.expect_almost_eq_const %result, dense<[(4.0, -2.0), (-2.0, 6.0)]> : tensor<2xcomplex<f64>>
  func.return
}
