func.func @f() {
  func.return {x = arrunc.return}
}
