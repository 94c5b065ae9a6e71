func.func @f() {
  func.return
a = 1, a = 2
}
