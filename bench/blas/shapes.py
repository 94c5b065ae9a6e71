#!/usr/bin/env python3
"""shapes.py — the GEMM shapes of a StableHLO program, as gemm_rate's --shapes.

Usage: python3 bench/blas/shapes.py FILE.mlir... [--dtype f32] [--convolutions] [--count]

Reads each `stablehlo.dot_general` / `stablehlo.dot` of the text (the form JAX
prints) and describes it as one batched row-major GEMM: batch = product of the
batching dims, K = product of the contracting dims, M (N) = product of the
lhs (rhs) free dims; the lhs is 'n' when its contracting dims come after its
free dims (A stored M x K), else 't'; the rhs is 'n' when its contracting
dims come before its free dims (B stored K x N), else 't'. Batching dims that
are not leading, or free dims split around the contracting ones, still give a
line: the GEMM is the same, only a library without strided batches needs a
copy for it. With --convolutions, each 2-D `stablehlo.convolution` is also
given as the im2col GEMM of its forward form (M = batch * output pixels,
N = output features, K = window * input features); that is an estimate of
the work, not what hlo runs. Prints the shapes space-separated on one line
(`M,N,K,batch:tt`, repeats removed, first-seen order); --count prints one
line per shape with how often it occurs and where.
"""
import re
import sys

DOT = re.compile(r"stablehlo\.dot(?:_general)?\s+%[\w#.]+,\s*%[\w#.]+(.*?):\s*\((tensor<[^>]*>),\s*(tensor<[^>]*>)\)\s*->\s*(tensor<[^>]*>)")
CONV = re.compile(r"stablehlo\.convolution\((.*?)\)\s*dim_numbers\s*=\s*\[([^\]]*)\]x\[([^\]]*)\]->\[([^\]]*)\].*?:\s*\((tensor<[^>]*>),\s*(tensor<[^>]*>)\)\s*->\s*(tensor<[^>]*>)")


def tensor(t):
    body = t[len("tensor<"):-1]
    parts = body.split("x")
    dims = [int(p) for p in parts[:-1] if p.isdigit()]
    return dims, parts[-1]


def dims_attr(text, name):
    m = re.search(name + r"\s*=\s*\[([\d,\s]*)\]\s*x\s*\[([\d,\s]*)\]", text)
    if not m:
        return [], []
    conv = lambda s: [int(x) for x in s.replace(" ", "").split(",") if x]
    return conv(m.group(1)), conv(m.group(2))


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def dot_shape(attrs, lt, rt, plain_dot):
    ld, dt = tensor(lt)
    rd, _ = tensor(rt)
    if plain_dot:  # stablehlo.dot: lhs last dim x rhs first dim
        lb, rb, lc, rc = [], [], [len(ld) - 1], [0]
    else:
        lb, rb = dims_attr(attrs, "batching_dims")
        lc, rc = dims_attr(attrs, "contracting_dims")
    lfree = [i for i in range(len(ld)) if i not in lb and i not in lc]
    rfree = [i for i in range(len(rd)) if i not in rb and i not in rc]
    batch = prod(ld[i] for i in lb)
    k = prod(ld[i] for i in lc)
    m = prod(ld[i] for i in lfree)
    n = prod(rd[i] for i in rfree)
    ta = "t" if lfree and lc and min(lc) < min(lfree) else "n"
    tb = "t" if rfree and rc and min(rfree) < min(rc) else "n"
    return dt, "%d,%d,%d,%d:%s%s" % (m, n, k, batch, ta, tb)


def conv_shape(lhs_spec, rhs_spec, out_spec, lt, rt, ot):
    ld, dt = tensor(lt)
    rd, _ = tensor(rt)
    od, _ = tensor(ot)
    ls = [s.strip() for s in lhs_spec.split(",")]
    rs = [s.strip() for s in rhs_spec.split(",")]
    os_ = [s.strip() for s in out_spec.split(",")]
    window = prod(rd[i] for i, s in enumerate(rs) if s.isdigit())
    m = prod(od[i] for i, s in enumerate(os_) if s == "b" or s.isdigit())
    n = od[os_.index("f")]
    k = window * rd[rs.index("i")]
    return dt, "%d,%d,%d,1:nn" % (m, n, k)


def main(argv):
    files, dtype, convs, count = [], "f32", False, False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--dtype":
            i += 1
            dtype = argv[i]
        elif a == "--convolutions":
            convs = True
        elif a == "--count":
            count = True
        else:
            files.append(a)
        i += 1
    if not files:
        sys.stderr.write(__doc__)
        return 2
    seen = {}
    for f in files:
        for line in open(f):
            for mt in DOT.finditer(line):
                dt, s = dot_shape(mt.group(1), mt.group(2), mt.group(3),
                                  "dot_general" not in line)
                if dtype in ("all", dt):
                    seen.setdefault(s, []).append(f)
            if convs:
                for mt in CONV.finditer(line):
                    dt, s = conv_shape(mt.group(2), mt.group(3), mt.group(4),
                                       mt.group(5), mt.group(6), mt.group(7))
                    if dtype in ("all", dt):
                        seen.setdefault(s + "#conv", []).append(f)
    if count:
        for s, fs in seen.items():
            print("%-26s %3d  %s" % (s, len(fs), " ".join(sorted(set(fs)))))
    else:
        print(" ".join(s.split("#")[0] for s in seen))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
