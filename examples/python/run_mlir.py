"""A StableHLO program compiled from a .mlir file with hlo.compile and run on
numpy arrays: the bundled JAX model (examples/models/mlp_block), its inputs
read from .npy files, its result compared with the one XLA:CPU gave.

usage: python3 examples/python/run_mlir.py [MODEL_DIR] [--backend cpu|interp]"""
import argparse
import glob
import os

import numpy as np

import hlo

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?", default=os.path.join(HERE, "..", "models", "mlp_block"))
    ap.add_argument("--backend", default="cpu")
    a = ap.parse_args()
    name = os.path.basename(os.path.normpath(a.model))
    exe = hlo.compile(os.path.join(a.model, name + ".mlir"), backend=a.backend)
    print(exe)
    paths = glob.glob(os.path.join(a.model, "inputs", "arg*.npy"))
    paths.sort(key=lambda p: int(os.path.basename(p)[3:-4]))     # arg2 before arg10
    args = [np.load(p) for p in paths]
    outs = exe.run(*args)
    for k, out in enumerate(outs):
        want = np.load(os.path.join(a.model, "expected", "out%d.npy" % k))
        err = np.linalg.norm(out.astype(np.float64) - want) / max(np.linalg.norm(want), 1e-30)
        print("out%d: %s %s, relative error against XLA:CPU %.2e" % (k, out.dtype, out.shape, err))
    cost = exe.cost_analysis()
    print("cost: %.0f flops, %.0f transcendentals, %.0f bytes accessed"
          % (cost["flops"], cost["transcendentals"], cost["bytes accessed"]))
    if a.backend == "cpu":
        m = exe.memory_analysis()
        print("memory: arguments %d B, outputs %d B, temporaries %d B, peak %d B"
              % (m.argument_size_in_bytes, m.output_size_in_bytes, m.temp_size_in_bytes,
                 m.peak_memory_in_bytes))


if __name__ == "__main__":
    main()
