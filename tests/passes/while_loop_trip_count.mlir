// PIPELINE: while-loop-trip-count
// XLA's WhileLoopTripCountAnnotator (src/passes/while_loop_trip_count.c):
// loops over a constant-initialised counter, tested against a constant and
// stepped by a constant, get hlo.known_trip_count; every other loop is left
// alone.

// JAX's fori_loop: i = 0; i < 5; i += 1 -> 5
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %a = %x) : tensor<i32>, tensor<f32>
    cond {
      %n = stablehlo.constant dense<5> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      %b = stablehlo.add %a, %a : tensor<f32>
      stablehlo.return %j, %b : tensor<i32>, tensor<f32>
    }
  return %0#1 : tensor<f32>
}
// CHECK: {hlo.known_trip_count = 5 : i64}

// -----

// The counter second, the bound on the left (N > i), a step of 3 from -4
// to 7 (-4, -1, 2, 5): 4; the constant bound defined outside the loop.
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %c0 = stablehlo.constant dense<-4> : tensor<i64>
  %n = stablehlo.constant dense<7> : tensor<i64>
  %0:2 = stablehlo.while(%a = %x, %i = %c0) : tensor<f32>, tensor<i64>
    cond {
      %p = stablehlo.compare GT, %n, %i, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %s = stablehlo.constant dense<3> : tensor<i64>
      %j = stablehlo.add %s, %i : tensor<i64>
      stablehlo.return %a, %j : tensor<f32>, tensor<i64>
    }
  return %0#0 : tensor<f32>
}
// CHECK: {hlo.known_trip_count = 4 : i64}

// -----

// i <= 9 over ui32 from 10: no iteration at all (0).
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %c0 = stablehlo.constant dense<10> : tensor<ui32>
  %0:2 = stablehlo.while(%i = %c0, %a = %x) : tensor<ui32>, tensor<f32>
    cond {
      %n = stablehlo.constant dense<9> : tensor<ui32>
      %p = stablehlo.compare LE, %i, %n, UNSIGNED : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<ui32>
      %j = stablehlo.add %i, %one : tensor<ui32>
      stablehlo.return %j, %a : tensor<ui32>, tensor<f32>
    }
  return %0#1 : tensor<f32>
}
// CHECK: {hlo.known_trip_count = 0 : i64}

// -----

// Not annotated: the counter would wrap (i8 from 0, i <= 127 is always
// true); the condition reads a carried float; the init is an argument; the
// body multiplies the counter.
func.func @main(%x: tensor<f32>, %k: tensor<i32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i8>
  %0:2 = stablehlo.while(%i = %c0, %a = %x) : tensor<i8>, tensor<f32>
    cond {
      %n = stablehlo.constant dense<127> : tensor<i8>
      %p = stablehlo.compare LE, %i, %n, SIGNED : (tensor<i8>, tensor<i8>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i8>
      %j = stablehlo.add %i, %one : tensor<i8>
      stablehlo.return %j, %a : tensor<i8>, tensor<f32>
    }
  %z = stablehlo.constant dense<0> : tensor<i32>
  %1:2 = stablehlo.while(%i = %z, %a = %x) : tensor<i32>, tensor<f32>
    cond {
      %n = stablehlo.constant dense<5> : tensor<i32>
      %lim = stablehlo.constant dense<1.0e+03> : tensor<f32>
      %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %q = stablehlo.compare LT, %a, %lim, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %r = stablehlo.and %p, %q : tensor<i1>
      stablehlo.return %r : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      %b = stablehlo.add %a, %a : tensor<f32>
      stablehlo.return %j, %b : tensor<i32>, tensor<f32>
    }
  %2:2 = stablehlo.while(%i = %k, %a = %x) : tensor<i32>, tensor<f32>
    cond {
      %n = stablehlo.constant dense<5> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %j, %a : tensor<i32>, tensor<f32>
    }
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %3:2 = stablehlo.while(%i = %c1, %a = %x) : tensor<i32>, tensor<f32>
    cond {
      %n = stablehlo.constant dense<100> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %two = stablehlo.constant dense<2> : tensor<i32>
      %j = stablehlo.multiply %i, %two : tensor<i32>
      stablehlo.return %j, %a : tensor<i32>, tensor<f32>
    }
  return %0#1, %1#1, %3#1 : tensor<f32>, tensor<f32>, tensor<f32>
}
// CHECK-NOT: known_trip_count
