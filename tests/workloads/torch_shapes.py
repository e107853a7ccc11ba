# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A deterministic CPU step for --record-shapes and --with-flops, no fvbpf
code: linear (with and without bias), addmm, mm, bmm, baddbmm, conv2d
(plain, strided and padded, grouped), scaled_dot_product_attention, mul and add (a 6-d tensor, sizes
out of line; 0-d and empty tensors), cat (a tensor list), a non-contiguous
view, a 9-d tensor (past the 8 dims fvbpf reads: its shape must come out
unknown, never wrong) and their backward ops, each step inside the
record_function scope "shapes_step".

  --odd (first argument, any mode): the step also multiplies a nested
  tensor (its TensorImpl is not a plain one: fvbpf must call it unknown)
  and a wrapper subclass with __torch_dispatch__.

  torch_shapes.py oracle            one step under torch.profiler(record_shapes=True,
                                    with_flops=True): prints one JSON line
                                    {"rows": [[name, shapes, count, flops]...],
                                     "dims": {name: [Input Dims...]} (aten ops)}
  torch_shapes.py run DIR STEPS     print pid=, wait for DIR/go, run STEPS steps,
                                    write DIR/done, wait for DIR/exit (2 min at most)
"""
import json
import os
import sys
import tempfile

import torch
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)

ODD = len(sys.argv) > 1 and sys.argv[1] == "--odd"
if ODD:
    del sys.argv[1]
    from torch.utils._pytree import tree_map

    class Wrapper(torch.Tensor):
        """A wrapper subclass: its own TensorImpl sizes, ops redispatched in Python."""

        @staticmethod
        def __new__(cls, e):
            return torch.Tensor._make_wrapper_subclass(cls, e.shape, dtype=e.dtype,
                                                       strides=e.stride())

        def __init__(self, e):
            self.e = e

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            def un(x):
                return x.e if isinstance(x, Wrapper) else x

            out = func(*tree_map(un, args), **tree_map(un, kwargs or {}))
            return tree_map(lambda x: Wrapper(x) if isinstance(x, torch.Tensor) else x, out)

    nested = torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(4, 3)])
    wrapped = Wrapper(torch.randn(3, 5))

x = torch.randn(8, 24, requires_grad=True)
w = torch.randn(40, 24, requires_grad=True)
b = torch.randn(40, requires_grad=True)
img = torch.randn(2, 3, 10, 10)
cw = torch.randn(6, 3, 3, 3, requires_grad=True)
cb = torch.randn(6)
gimg = torch.randn(2, 4, 10, 12)
gw = torch.randn(6, 2, 3, 5)
b1, b2, b3 = torch.randn(4, 5, 7), torch.randn(4, 7, 3), torch.randn(4, 5, 3)
a6 = torch.randn(2, 1, 3, 1, 2, 4)
a9 = torch.ones(1, 1, 1, 1, 1, 1, 1, 1, 2)
zero_d = torch.tensor(3.0)
empty = torch.empty(0, 3)
m = torch.randn(24, 8)
q, k, v = torch.randn(2, 4, 6, 8), torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 8)


def step():
    with torch.profiler.record_function("shapes_step"):
        y = F.linear(x, w, b)
        y2 = F.linear(x, w)
        torch.bmm(b1, b2)
        torch.baddbmm(b3, b1, b2)
        c = F.conv2d(img, cw, cb)
        F.conv2d(img, cw, stride=2, padding=1)
        F.conv2d(gimg, gw, groups=2)
        a6 * 2.0
        a9 * 2.0
        torch.mul(zero_d, empty)
        torch.add(a6, a6)
        torch.cat([x, x], 0)
        m.t().mm(m)  # a non-contiguous view into mm
        F.scaled_dot_product_attention(q, k, v)
        if ODD:
            nested * 2.0
            torch.mul(wrapped, 2.0)
        loss = (y.sum() + y2.sum() + c.sum())
        loss.backward()
    x.grad = w.grad = b.grad = cw.grad = None


for _ in range(2):
    step()

mode = sys.argv[1] if len(sys.argv) > 1 else "oracle"
if mode == "oracle":
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True) as prof:
        step()
    rows = [[e.key, str(e.input_shapes), e.count, e.flops]
            for e in prof.key_averages(group_by_input_shape=True)]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.json")
        prof.export_chrome_trace(path)
        ev = json.load(open(path))["traceEvents"]
    dims = {}
    for e in ev:
        if e.get("cat") == "cpu_op" and e["name"].startswith("aten::"):
            dims.setdefault(e["name"], []).append(e["args"].get("Input Dims"))
    print(json.dumps({"rows": rows, "dims": dims}, sort_keys=True))
elif mode == "run":
    from wl_steps import run_steps

    run_steps(sys.argv[2], int(sys.argv[3]), step)
else:
    sys.exit("usage: torch_shapes.py oracle | run DIR STEPS")
