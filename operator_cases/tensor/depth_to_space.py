"""DepthToSpace: move blocks of channels into [blocksize, blocksize] spatial blocks (ONNX spec:
DepthToSpace-1, 11, 13, 28).

The input is [N, C, H, W]; the output [N, C / blocksize^2, H * blocksize, W * blocksize].
DepthToSpace-11 adds ``mode`` and spells out both orders as numpy code, which our reference
follows: DCR (the default, depth-column-row) reshapes to [b, bs, bs, c / bs^2, h, w] and
transposes by [0, 3, 4, 1, 5, 2]; CRD (column-row-depth) reshapes to [b, c / bs^2, bs, bs, h, w]
and transposes by [0, 1, 4, 2, 5, 3]. DepthToSpace-1 has no ``mode``: it is the DCR order (the
one version 11 keeps as default). 13 adds bfloat16; 28 only reformats the text. Data movement
only: every dtype and special value is copied exactly.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

from .._tensor_util import block_edges, block_plan, draw_block, fill

op = Operator("DepthToSpace")
op.draws(1, 11, 13, 28, share=0.25)  # a wide type sweep of one behaviour: the edge examples carry the special values
VERSIONS = (11, 13, 28)


@op.reference(1, *VERSIONS)
def depth_to_space(x, *, blocksize, mode="DCR"):
    x = np.asarray(x)
    b, c, h, w = x.shape
    bs = int(blocksize)
    if c % (bs * bs):
        raise ValueError(f"DepthToSpace: C={c} is not a multiple of blocksize^2={bs * bs}")
    if mode == "DCR":
        tmp = x.reshape(b, bs, bs, c // (bs * bs), h, w).transpose(0, 3, 4, 1, 5, 2)
    elif mode == "CRD":
        tmp = x.reshape(b, c // (bs * bs), bs, bs, h, w).transpose(0, 1, 4, 2, 5, 3)
    else:
        raise ValueError(f"DepthToSpace: unknown mode {mode!r}")
    return tmp.reshape(b, c // (bs * bs), h * bs, w * bs).copy()


@op.strategy(1, *VERSIONS)
def draw(d, dtype, opset):
    return draw_block(d, dtype, depth=True, modes=opset >= 11)


@op.edges(1, *VERSIONS)
def edges(dtype, opset):
    out = block_edges(dtype, opset >= 11, (1, 8, 2, 3), (2, 9, 1, 2), (0, 4, 2, 2))
    return out + [Example([fill(dtype, (1, 3, 2, 0))], {"blocksize": 1}, name="blocksize1_empty_width"),
                  Example([fill(dtype, (1, 4, 1, 1))], {"blocksize": 2}, name="one_pixel")]


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    return block_plan(c, depth=True, modes=c.since >= 11)
