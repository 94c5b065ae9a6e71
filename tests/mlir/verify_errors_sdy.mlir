// Negative cases for the verifier's Shardy (sdy) checks (tests/unit/test_verify.c
// runs every tests/mlir/verify_errors*.mlir): each piece breaks one rule of
// Shardy's verifiers; the comment names the expected message and its line.

module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    // expected-error@+1 {{sdy.sharding_constraint (SDY): result: the sharding's mesh @nomesh is not defined}}
    %0 = sdy.sharding_constraint %a <@nomesh, [{"x"}, {}]> : tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

// -----

module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    // expected-error@+1 {{the sharding has 1 dimension(s) but the tensor has rank 2}}
    %0 = sdy.sharding_constraint %a <@mesh, [{"x"}]> : tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

// -----

module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    // expected-error@+1 {{axis "y" is not an axis of the mesh}}
    %0 = sdy.reshard %a <@mesh, [{"y"}, {}]> : tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

// -----

module {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    // expected-error@+1 {{axis "x" is used more than once in a sharding}}
    %0 = sdy.sharding_constraint %a <@mesh, [{"x"}, {}], replicated={"x"}> : tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

// -----

module {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    // expected-error@+1 {{sub-axis "x":(2)4 does not divide the axis of size 4}}
    %0 = sdy.sharding_constraint %a <@mesh, [{"x":(2)4}, {}]> : tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

// -----

module {
  // expected-error@+1 {{sdy.mesh @mesh (SDY): mesh axis "x" has size 0}}
  sdy.mesh @mesh = <["x"=0]>
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
}

// -----

module {
  // expected-error@+1 {{device_ids lists 1 ids but the mesh has 2 devices}}
  sdy.mesh @mesh = <["x"=2], device_ids=[0]>
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
}

// -----

module {
  // expected-error@+1 {{mesh axis "x" appears twice}}
  sdy.mesh @mesh = <["x"=1, "x"=1]>
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
}

// -----

module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    // expected-error@+1 {{region argument #0: dimension 0 has local size 4 but the sharding over the manual axes gives 2}}
    %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%b: tensor<4x2xf32>) {
      sdy.return %b : tensor<4x2xf32>
    } : (tensor<4x2xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

// -----

module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    // expected-error@+1 {{`in_shardings` has 2 sharding(s) for 1 value(s)}}
    %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%b: tensor<2x2xf32>) {
      sdy.return %b : tensor<2x2xf32>
    } : (tensor<4x2xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

// -----

module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    // expected-error@+1 {{manual axis "z" is not an axis of the mesh}}
    %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"z"} (%b: tensor<4x2xf32>) {
      sdy.return %b : tensor<4x2xf32>
    } : (tensor<4x2xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

// -----

module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    %0 = sdy.named_computation<"f">(%a) (%b: tensor<4x2xf32>) {
      %c = stablehlo.convert %b : (tensor<4x2xf32>) -> tensor<4x2xf64>
      // expected-error@+1 {{sdy.return operand #0's type differs from result #0's}}
      sdy.return %c : tensor<4x2xf64>
    } : (tensor<4x2xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

// -----

module {
  sdy.mesh @mesh = <["x"=2]>
  // expected-error@+1 {{func (SDY): argument #0: the sharding has 1 dimension(s) but the tensor has rank 2}}
  func.func @main(%a: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<4x2xf32> {
    return %a : tensor<4x2xf32>
  }
}

// -----

module {
  sdy.mesh @mesh = <["x"=2]>
  // expected-error@+1 {{func (SDY): result #0: axis "q" is not an axis of the mesh}}
  func.func @main(%a: tensor<4x2xf32>) -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"q"}, {}]>}) {
    return %a : tensor<4x2xf32>
  }
}

// -----

module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    // expected-error@+1 {{stablehlo.add (SDY): `sdy.sharding` has 2 sharding(s) for 1 value(s)}}
    %0 = stablehlo.add %a, %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>, <@mesh, [{}, {}]>]>} : tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

// -----

module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    // expected-error@+1 {{allowed_direction must be NONE, FORWARD, BACKWARD or BOTH}}
    %0 = sdy.propagation_barrier %a allowed_direction=SIDEWAYS : tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

// -----

// expected-error@+1 {{func (GSPMD): argument #0: the sharding tiles 1 dimension(s) but the tensor has rank 2}}
func.func @main(%a: tensor<4x2xf32> {mhlo.sharding = "{devices=[2]0,1}"}) -> tensor<4x2xf32> {
  return %a : tensor<4x2xf32>
}

// -----

func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{stablehlo.custom_call (GSPMD): mhlo.sharding: malformed GSPMD sharding at offset 15: fewer device ids than tiles}}
  %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{devices=[2,1]0}"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

module {
  sdy.mesh @maximal = <[], device_ids=[0]>
  func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    // a maximal sharding (no dimensions) fits any rank; one with dimensions must match it
    %0 = stablehlo.add %a, %a {sdy.sharding = #sdy.sharding_per_value<[<@maximal, []>]>} : tensor<4x2xf32>
    // expected-error@+1 {{sdy.sharding #0: the sharding has 1 dimension(s) but the tensor has rank 2}}
    %1 = stablehlo.add %0, %a {sdy.sharding = #sdy.sharding_per_value<[<@maximal, [{}]>]>} : tensor<4x2xf32>
    return %1 : tensor<4x2xf32>
  }
}

// -----

module {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    // expected-error@+1 {{sub-axis sizes must be greater than 1: "x":(1)1}}
    %0 = sdy.sharding_constraint %a <@mesh, [{"x":(1)1}, {}]> : tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

// -----

module {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    // expected-error@+1 {{sub-axis size is equal to the full axis size: "x":(1)4}}
    %0 = sdy.sharding_constraint %a <@mesh, [{"x":(1)4}, {}]> : tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}

