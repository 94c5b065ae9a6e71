"""hlo from Python: StableHLO programs compiled and run by hlo's C library
(include/hlo/hlo.h, loaded from libhlo.so), with an API modelled on JAX's.

    import hlo, jax.numpy as jnp
    f = hlo.jit(lambda x: jnp.sin(x) * 2)     # JAX lowers, hlo compiles and runs
    f(jnp.arange(3.0))                        # -> numpy array
    exe = hlo.compile("model.mlir")           # a StableHLO file or text
    exe(x, w)                                 # numpy in, numpy out

Errors are hlo.HloError (code, code_name, message, diagnostic). See
docs/python.md.
"""
from ._lib import HloError
from ._core import compile, Executable, TensorType, MemoryAnalysis, backends
from ._jit import jit, Lowered, Compiled

# The C library's version (HLO_VERSION in the Makefile; tests check they agree).
__version__ = "0.1.0"

__all__ = ["HloError", "compile", "Executable", "TensorType", "MemoryAnalysis", "backends",
           "jit", "Lowered", "Compiled", "__version__"]
