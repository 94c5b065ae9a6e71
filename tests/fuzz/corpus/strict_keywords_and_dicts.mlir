module attributes {m.a = 1 : i32, "m b" = "s"} {
  func.func @main(%a: tensor<2x3xf32> {x.y = 1 : i64}, %b: tensor<3xf32>) -> (tensor<3x2xf32> {r.z}) attributes {k = [1, 2]} {
    %0 = stablehlo.transpose %a, dims = [1, 0] {t = i32, u = index, v = complex<f32>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %1 = stablehlo.broadcast_in_dim %b, dims = [0] : (tensor<3xf32>) -> tensor<3x2xf32>
    %c = stablehlo.constant {w = @main} dense<1.0> : tensor<f32>
    %2 = stablehlo.pad %1, %c, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
    %3 = stablehlo.dot_general %a, %2, contracting_dims = [1] x [0], precision = [DEFAULT, HIGHEST] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
    %4 = "stablehlo.add"(%0, %2) <{}> {d = {e = #stablehlo<comparison_direction EQ>, f}} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    %5 = stablehlo.iota dim = 0 : tensor<4xi32>
    func.return %4 : tensor<3x2xf32>
  }
}
