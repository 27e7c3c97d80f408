"""SpaceToDepth: move [blocksize, blocksize] spatial blocks into channels (ONNX spec:
SpaceToDepth-1, 13, 28).

The input is [N, C, H, W] with H and W multiples of blocksize; the output
[N, C * blocksize^2, H / blocksize, W / blocksize]. The spec gives no formula: DepthToSpace
calls itself "the reverse transformation of SpaceToDepth", so our reference is the inverse of
DepthToSpace's numpy code: DCR (output channel (bh * bs + bw) * C + c) reshapes to
[b, c, h / bs, bs, w / bs, bs] and transposes by [0, 3, 5, 1, 2, 4]; CRD (output channel
c * bs^2 + bh * bs + bw) transposes by [0, 1, 3, 5, 2, 4]. SpaceToDepth-1 and 13 have DCR
only; 28 adds ``mode`` ("depth-column-row (DCR, the default) or column-row-depth (CRD)").
Data movement only: every dtype and special value is copied exactly.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

from .._tensor_util import block_edges, block_plan, draw_block, fill

op = Operator("SpaceToDepth")
op.draws(1, 13, 28, share=0.25)  # a wide type sweep of one behaviour: the edge examples carry the special values
VERSIONS = (1, 13, 28)


@op.reference(*VERSIONS)
def space_to_depth(x, *, blocksize, mode="DCR"):
    x = np.asarray(x)
    b, c, h, w = x.shape
    bs = int(blocksize)
    if h % bs or w % bs:
        raise ValueError(f"SpaceToDepth: H={h}, W={w} are not multiples of blocksize={bs}")
    tmp = x.reshape(b, c, h // bs, bs, w // bs, bs)
    if mode == "DCR":
        tmp = tmp.transpose(0, 3, 5, 1, 2, 4)
    elif mode == "CRD":
        tmp = tmp.transpose(0, 1, 3, 5, 2, 4)
    else:
        raise ValueError(f"SpaceToDepth: unknown mode {mode!r}")
    return tmp.reshape(b, c * bs * bs, h // bs, w // bs).copy()


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    return draw_block(d, dtype, depth=False, modes=opset >= 28)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    out = block_edges(dtype, opset >= 28, (1, 2, 2, 4), (1, 1, 3, 6), (0, 2, 2, 2))
    return out + [Example([fill(dtype, (1, 3, 0, 2))], {"blocksize": 1}, name="blocksize1_empty_height"),
                  Example([fill(dtype, (1, 1, 2, 2))], {"blocksize": 2}, name="one_block")]


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    return block_plan(c, depth=False, modes=c.since >= 28)
