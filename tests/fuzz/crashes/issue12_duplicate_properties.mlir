func.func @f() {
  "func.return"() <{a = 1 : i64, a = 2 : i64}> : () -> ()
}
