# xla_dot.py — XLA:CPU's time for one f32 row-major dot alone (jax.jit(jnp.dot)
# of M x K by K x N, random normal operands), to compare with gemm_rate:
#   python3 bench/blas/xla_dot.py M N K [reps]      (pin: taskset -c 0,1 ...)
# Prints the median and minimum time of `reps` (default 200) warm calls, the
# GFLOP/s at the median (2*M*N*K / time) and the CPUs the process may use.
# Runs on the CPU (JAX_PLATFORMS=cpu unless set otherwise).
import os, sys, time
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax, jax.numpy as jnp, numpy as np
m, n, k = (int(x) for x in sys.argv[1:4])
reps = int(sys.argv[4]) if len(sys.argv) > 4 else 200
a = jnp.asarray(np.random.randn(m, k).astype(np.float32))
b = jnp.asarray(np.random.randn(k, n).astype(np.float32))
f = jax.jit(jnp.dot)
f(a, b).block_until_ready()
ts = []
for _ in range(reps):
    t = time.perf_counter(); f(a, b).block_until_ready(); ts.append(time.perf_counter() - t)
ts.sort()
med = ts[len(ts) // 2]
print(f"xla {m}x{n}x{k}: median {med*1e3:.3f} ms, min {ts[0]*1e3:.3f} ms, {2*m*n*k/med/1e9:.1f} GFLOP/s (median), cpus {len(os.sched_getaffinity(0))}")
