"""hlo.compile and hlo.Executable: numpy in and out, types, analyses, every
element type of the C API, errors as hlo.HloError, threads."""
import os
import re
import threading

import numpy as np
import pytest

import hlo

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ADD = """func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %z = stablehlo.add %x, %y : tensor<2x3xf32>
  return %z : tensor<2x3xf32>
}
"""

TWO = """func.func @main(%x: tensor<4xf32>, %n: tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {
  %e = stablehlo.exponential %x : tensor<4xf32>
  %c = stablehlo.constant dense<1> : tensor<i32>
  %m = stablehlo.add %n, %c : tensor<i32>
  return %e, %m : tensor<4xf32>, tensor<i32>
}
"""


def identity(t):
    return ("func.func @main(%%x: tensor<3x%s>) -> tensor<3x%s> {\n"
            "  return %%x : tensor<3x%s>\n}\n" % (t, t, t))


def test_version_matches_makefile():
    with open(os.path.join(ROOT, "Makefile")) as f:
        want = re.search(r"^HLO_VERSION := (\S+)", f.read(), re.M).group(1)
    assert hlo.__version__ == want


def test_backends():
    b = hlo.backends()
    assert "interp" in b and "cpu" in b   # the test machine has a C compiler


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_add(path, backend):
    exe = hlo.compile(ADD, backend=backend)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full((2, 3), 0.5, np.float32)
    out = exe(x, y)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == (2, 3)
    np.testing.assert_array_equal(out, x + y)
    assert exe.num_args == 2 and exe.num_results == 1


def test_types_and_analyses():
    exe = hlo.compile(TWO)
    assert [repr(t) for t in exe.input_types] == ["f32[4]", "i32[]"]
    assert [repr(t) for t in exe.output_types] == ["f32[4]", "i32[]"]
    assert exe.input_types[0].dtype == np.float32 and exe.input_types[1].shape == ()
    e, m = exe(np.zeros(4, np.float32), np.int32(41))
    np.testing.assert_array_equal(e, np.ones(4, np.float32))
    assert m.dtype == np.int32 and int(m) == 42
    c = exe.cost_analysis()
    assert set(c) == {"flops", "transcendentals", "bytes accessed"}
    assert c["transcendentals"] == 4 and c["bytes accessed"] > 0
    ma = exe.memory_analysis()
    assert ma.argument_size_in_bytes == 20 and ma.output_size_in_bytes == 20
    assert ma.peak_memory_in_bytes >= 40
    assert "stablehlo" in exe.as_text() or "hlo.fusion" in exe.as_text()


def test_memory_analysis_interp_is_an_error():
    exe = hlo.compile(ADD, backend="interp")
    with pytest.raises(hlo.HloError) as e:
        exe.memory_analysis()
    assert e.value.code_name == "INVALID_ARGUMENT"


def test_from_path_and_pathlike(tmp_path):
    p = tmp_path / "add.mlir"
    p.write_text(ADD)
    x = np.ones((2, 3), np.float32)
    for src in (str(p), p):
        np.testing.assert_array_equal(hlo.compile(src)(x, x), 2 * x)


def test_large_result_without_copy(path):
    text = ("func.func @main(%x: tensor<1000x100xf32>) -> tensor<1000x100xf32> {\n"
            "  %y = stablehlo.multiply %x, %x : tensor<1000x100xf32>\n"
            "  return %y : tensor<1000x100xf32>\n}\n")
    exe = hlo.compile(text)
    x = np.random.default_rng(0).standard_normal((1000, 100)).astype(np.float32)
    out = exe(x)
    np.testing.assert_array_equal(out, x * x)
    assert out.base is not None      # a view of the hlo_buffer, not a copy
    out[0, 0] = 7.0                  # ours to write
    del out                          # frees the hlo_buffer (ASan builds check)


def test_zero_size(path):
    text = ("func.func @main(%x: tensor<0x3xf32>) -> tensor<0x3xf32> {\n"
            "  %y = stablehlo.negate %x : tensor<0x3xf32>\n  return %y : tensor<0x3xf32>\n}\n")
    out = hlo.compile(text)(np.zeros((0, 3), np.float32))
    assert out.shape == (0, 3) and out.dtype == np.float32


def _dtypes():
    import ml_dtypes
    out = [("i1", np.bool_), ("i8", np.int8), ("i16", np.int16), ("i32", np.int32),
           ("i64", np.int64), ("ui8", np.uint8), ("ui16", np.uint16), ("ui32", np.uint32),
           ("ui64", np.uint64), ("f16", np.float16), ("f32", np.float32), ("f64", np.float64),
           ("complex<f32>", np.complex64), ("complex<f64>", np.complex128),
           ("bf16", ml_dtypes.bfloat16), ("i4", ml_dtypes.int4), ("ui4", ml_dtypes.uint4),
           ("f8E4M3FN", ml_dtypes.float8_e4m3fn), ("f8E5M2", ml_dtypes.float8_e5m2),
           ("f8E4M3FNUZ", ml_dtypes.float8_e4m3fnuz), ("f8E5M2FNUZ", ml_dtypes.float8_e5m2fnuz),
           ("f8E4M3B11FNUZ", ml_dtypes.float8_e4m3b11fnuz)]
    for h, m in [("i2", "int2"), ("ui2", "uint2"), ("f8E4M3", "float8_e4m3"),
                 ("f8E3M4", "float8_e3m4"), ("f8E8M0FNU", "float8_e8m0fnu"),
                 ("f4E2M1FN", "float4_e2m1fn"), ("f6E2M3FN", "float6_e2m3fn"),
                 ("f6E3M2FN", "float6_e3m2fn")]:
        if hasattr(ml_dtypes, m):
            out.append((h, getattr(ml_dtypes, m)))
    return out


@pytest.mark.parametrize("name,dt", _dtypes(), ids=[d[0] for d in _dtypes()])
def test_every_dtype_round_trips(path, name, dt):
    exe = hlo.compile(identity(name), backend="interp")
    assert exe.input_types[0].dtype == np.dtype(dt)
    x = np.array([1, 0, 1], dtype=dt)
    out = exe(x)
    assert out.dtype == np.dtype(dt) and out.shape == (3,)
    assert out.tobytes() == x.tobytes()


def test_bf16_arithmetic(path):
    import ml_dtypes
    text = ("func.func @main(%x: tensor<5xbf16>) -> tensor<5xbf16> {\n"
            "  %y = stablehlo.add %x, %x : tensor<5xbf16>\n  return %y : tensor<5xbf16>\n}\n")
    x = np.array([1, 2.5, -3, 0.125, 100], ml_dtypes.bfloat16)
    np.testing.assert_array_equal(hlo.compile(text)(x).astype(np.float32),
                                  2 * x.astype(np.float32))


def test_scalars_and_jax_and_dlpack_inputs(path):
    exe = hlo.compile(TWO)
    e, m = exe([0.0, 0.0, 0.0, 0.0], 3)        # lists and Python scalars
    assert int(m) == 4
    import jax.numpy as jnp
    e, m = exe(jnp.zeros(4, jnp.float32), jnp.int32(1))   # JAX arrays
    assert int(m) == 2 and float(e[0]) == 1.0

    class OnlyDlpack:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    e, m = exe(OnlyDlpack(np.zeros(4, np.float32)), np.int32(5))
    assert int(m) == 6


# ---------------------------------------------------------------- errors

def _err(fn, *args, code="INVALID_ARGUMENT"):
    with pytest.raises(hlo.HloError) as e:
        fn(*args)
    assert e.value.code_name == code, str(e.value)
    return str(e.value)


def test_wrong_count(path):
    exe = hlo.compile(ADD)
    x = np.ones((2, 3), np.float32)
    msg = _err(exe, x)
    assert "expected 2 arguments" in msg and "got 1" in msg
    _err(exe, x, x, x)


def test_wrong_dtype_names_the_argument(path):
    exe = hlo.compile(ADD)
    msg = _err(exe, np.ones((2, 3), np.float32), np.ones((2, 3), np.float64))
    assert "argument 1" in msg and "f32[2,3]" in msg and "float64" in msg


def test_wrong_shape_names_the_argument(path):
    exe = hlo.compile(ADD)
    msg = _err(exe, np.ones((3, 2), np.float32), np.ones((2, 3), np.float32))
    assert "argument 0" in msg and "[3, 2]" in msg


def test_non_contiguous(path):
    exe = hlo.compile(ADD)
    x = np.ones((3, 2), np.float32).T
    msg = _err(exe, x, np.ones((2, 3), np.float32))
    assert "argument 0" in msg and "contiguous" in msg


def test_not_an_array(path):
    exe = hlo.compile(ADD)
    msg = _err(exe, object(), np.ones((2, 3), np.float32))
    assert "argument 0" in msg


def test_parse_error_is_located():
    bad = ADD.replace("%y : tensor<2x3xf32>\n  return", "%q : tensor<2x3xf32>\n  return")
    with pytest.raises(hlo.HloError) as e:
        hlo.compile(bad)
    assert e.value.code_name == "PARSE_ERROR"
    assert "<string>:2:" in str(e.value) and "%q" in e.value.message
    assert "^" in e.value.diagnostic        # the caret under the column


def test_not_stablehlo_file(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("this is not a StableHLO module\n{}\n")
    with pytest.raises(hlo.HloError) as e:
        hlo.compile(str(p))
    assert e.value.code_name == "PARSE_ERROR" and "notes.txt:1:" in str(e.value)


def test_missing_file():
    _err(hlo.compile, "/nonexistent/dir/model.mlir", code="NOT_FOUND")


def test_verify_error():
    bad = ADD.replace("-> tensor<2x3xf32> {", "-> tensor<2x4xf32> {").replace(
        "return %z : tensor<2x3xf32>", "return %z : tensor<2x4xf32>")
    with pytest.raises(hlo.HloError) as e:
        hlo.compile(bad)
    assert e.value.code_name in ("VERIFY_ERROR", "PARSE_ERROR")


def test_bad_backend_and_option():
    _err(hlo.compile, ADD, "tpu")
    _err(hlo.compile, ADD, None, {"no_such_option": 1})
    _err(hlo.compile, ADD, None, {"passes": "no-such-pass"})


def test_failed_run_is_an_exception(path):
    text = ("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %y = stablehlo.custom_call @no_such_target(%x) : (tensor<2xf32>) -> tensor<2xf32>\n"
            "  return %y : tensor<2xf32>\n}\n")
    try:
        exe = hlo.compile(text, backend="interp")
    except hlo.HloError as e:      # rejected at compile time: fine too
        assert "no_such_target" in str(e)
        return
    with pytest.raises(hlo.HloError) as e:
        exe(np.ones(2, np.float32))
    assert "no_such_target" in str(e.value)


def test_error_pickles():
    import pickle
    e = hlo.HloError(1, "m", "d")
    f = pickle.loads(pickle.dumps(e))
    assert (f.code, f.message, f.diagnostic) == (1, "m", "d")


# --------------------------------------------------------------- threads

def test_one_executable_from_many_threads(path):
    exe = hlo.compile(ADD)
    errors = []

    def work(k):
        try:
            x = np.full((2, 3), k, np.float32)
            for _ in range(200):
                out = exe(x, x)
                if not (out == 2 * k).all():
                    errors.append("thread %d: %r" % (k, out))
                    return
        except Exception as e:     # reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_results_leave_by_dlpack_without_a_copy(path):
    text = ("func.func @main(%x: tensor<4096xf32>) -> tensor<4096xf32> {\n"
            "  %y = stablehlo.negate %x : tensor<4096xf32>\n  return %y : tensor<4096xf32>\n}\n")
    out = hlo.compile(text)(np.ones(4096, np.float32))
    back = np.from_dlpack(out)
    assert back.__array_interface__["data"][0] == out.__array_interface__["data"][0]
    import jax
    j = jax.dlpack.from_dlpack(out)
    assert float(j.sum()) == -4096.0


def test_dynamic_shapes(path):
    text = ("func.func @main(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {\n"
            "  %y = stablehlo.add %x, %x : tensor<?x2xf32>\n  return %y : tensor<?x2xf32>\n}\n")
    exe = hlo.compile(text)
    assert repr(exe.input_types[0]) == "f32[?,2]"
    for n in (1, 5, 1):
        x = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
        np.testing.assert_array_equal(exe(x), 2 * x)
    msg = _err(exe, np.ones((3, 3), np.float32))
    assert "argument 0" in msg


def test_token_parameters_and_results(path):
    text = ("func.func @main(%t: !stablehlo.token, %x: tensor<2xf32>) -> "
            "(!stablehlo.token, tensor<2xf32>) {\n"
            "  %y = stablehlo.negate %x : tensor<2xf32>\n"
            "  return %t, %y : !stablehlo.token, tensor<2xf32>\n}\n")
    exe = hlo.compile(text, backend="interp")
    assert [t.kind for t in exe.input_types] == ["token", "tensor"]
    tok, y = exe(None, np.ones(2, np.float32))
    assert tok is None
    np.testing.assert_array_equal(y, -np.ones(2, np.float32))


@pytest.mark.parametrize("n", [5, 5000])       # a copied result, a view of a large one
def test_bf16_in_and_out(path, n):
    import ml_dtypes
    text = ("func.func @main(%x: tensor<NxBF>) -> tensor<NxBF> {\n"
            "  %y = stablehlo.multiply %x, %x : tensor<NxBF>\n  return %y : tensor<NxBF>\n}\n"
            ).replace("N", str(n)).replace("BF", "bf16")
    x = (np.arange(n) % 64).astype(ml_dtypes.bfloat16)
    out = hlo.compile(text)(x)
    assert out.dtype == ml_dtypes.bfloat16 and out.shape == (n,)
    np.testing.assert_array_equal(out.astype(np.float32),
                                  (x.astype(np.float32) ** 2).astype(ml_dtypes.bfloat16)
                                  .astype(np.float32))


def test_python_ints_out_of_range_are_errors(path):
    # numpy would wrap 300 to 44 in an int8; the call names the argument instead
    exe = hlo.compile("func.func @main(%a: tensor<2xi8>) -> tensor<2xi8> {\n"
                      "  return %a : tensor<2xi8>\n}\n")
    np.testing.assert_array_equal(exe([100, -128]), np.array([100, -128], np.int8))
    msg = _err(exe, [300, 1])
    assert "argument 0" in msg and "300" in msg and "int8" in msg
