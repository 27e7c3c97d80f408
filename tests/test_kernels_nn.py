"""The neural-network kernels of the ``kernels`` engine (``harness/backends/kernels/nn_*.py``).

Three kinds of checks:

- the official ONNX node cases of every NN operator, driven straight through the registered
  kernel factories (one test per family, so a failure names the cases and the error);
- independent brute-force loops for Conv (groups, dilations, pads, strides, auto_pad) and
  MaxPool / AveragePool (ceil_mode, count_include_pad, dilations, indices) on random shapes;
- dtype behaviour and the independence rule (no onnx.reference, no operator_cases).
"""

from __future__ import annotations

import itertools
import math
import pathlib
import warnings

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper, numpy_helper

import harness.backends.kernels  # noqa: F401  (imports every kernel module)
from harness.backends.kernels import registry
from harness.backends.kernels.compiler import attribute_value

KERNEL_DIR = pathlib.Path(registry.__file__).parent

FAMILIES = {
    "conv": ["Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "DeformConv", "Col2Im"],
    "pool": ["MaxPool", "AveragePool", "LpPool", "GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool",
             "MaxRoiPool", "MaxUnpool", "RoiAlign"],
    "norm": ["BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization",
             "RMSNormalization", "LRN", "LpNormalization", "MeanVarianceNormalization"],
    "rnn": ["LSTM", "GRU", "RNN"],
    "resize": ["Resize", "Upsample", "GridSample", "AffineGrid"],
    "signal": ["DFT", "STFT", "HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix"],
    "attention": ["Attention", "RotaryEmbedding", "LinearAttention"],
    "misc": ["DepthToSpace", "SpaceToDepth", "Col2Im", "NonMaxSuppression", "TfIdfVectorizer", "CenterCropPad"],
    "random": ["Dropout", "Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform",
               "RandomUniformLike", "Multinomial"],
}
#: official cases whose expected data departs from the spec text, which the kernel follows
#: (the same entries are in harness/expectations/kernels.toml)
SPEC_DEPARTURES = {
    "test_roialign_mode_max": "expected data takes the largest weighted corner per sample, not the "
                              "interpolated value (onnx/onnx#4764)",
}
RANDOM_OPS = {"Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial"}
ALL_OPS = {op for ops in FAMILIES.values() for op in ops}


# --------------------------------------------------------------------------- driving kernels


def bind(node: onnx.NodeProto, opset: int):
    factory = registry.lookup("", node.op_type, opset)
    assert factory is not None, f"no kernel for {node.op_type} at opset {opset}"
    info = registry.NodeInfo(
        node=node, attrs={a.name: attribute_value(a) for a in node.attribute}, opset=opset,
        inputs=list(node.input), outputs=list(node.output),
    )
    return factory(info)


def run_node(op_type, inputs, opset=22, outputs=("y",), **attrs):
    node = helper.make_node(op_type, [f"i{k}" if v is not None else "" for k, v in enumerate(inputs)],
                            list(outputs), **attrs)
    return bind(node, opset)(*inputs)


def _tolerance(case, expected):
    rtol, atol = max(1e-3, case.rtol), max(1e-7, case.atol)
    if str(expected.dtype) == "bfloat16":
        # the official cases compute step by step in bfloat16 with rtol 1e-3, finer than the
        # type's own resolution (2**-8): allow one bfloat16 unit in the last place
        rtol, atol = max(rtol, 2.0**-7), max(atol, 2.0**-8)
    return rtol, atol


def check_case(case) -> str | None:
    """None when the case passes, else a one-line reason."""
    g = case.model.graph
    node = g.node[0]
    opset = next(o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx"))
    fn = bind(node, opset)
    names = [i.name for i in g.input]
    random_like = node.op_type in RANDOM_OPS or (
        case.name.startswith("test_training_dropout") and "zero_ratio" not in case.name
    )
    for inputs, outputs in case.data_sets:
        feeds = dict(zip(names, inputs))
        got = list(fn(*[feeds[n] if n else None for n in node.input]))
        for out, expected in zip(g.output, outputs):
            actual = np.asarray(got[list(node.output).index(out.name)])
            expected = np.asarray(expected)
            if actual.dtype != expected.dtype:
                return f"{out.name}: dtype {actual.dtype} != {expected.dtype}"
            if actual.shape != expected.shape:
                return f"{out.name}: shape {actual.shape} != {expected.shape}"
            if random_like:
                continue
            if expected.dtype.kind in "OUSb":
                if not np.array_equal(actual, expected):
                    return f"{out.name}: values differ"
                continue
            rtol, atol = _tolerance(case, expected)
            a = actual.astype(np.float64)
            e = expected.astype(np.float64)
            if not np.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True):
                return f"{out.name}: max abs err {np.nanmax(np.abs(a - e)):.3g}"
    return None


@pytest.fixture(scope="module")
def node_cases():
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases(None)
    by_op: dict[str, list] = {}
    for c in cases:
        ops = [n.op_type for n in c.model.graph.node]
        if len(ops) == 1 and ops[0] in ALL_OPS:
            by_op.setdefault(ops[0], []).append(c)
    return by_op


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_official_node_cases(node_cases, family):
    failures = []
    count = 0
    with np.errstate(all="ignore"):
        for op in FAMILIES[family]:
            for case in node_cases.get(op, []):
                count += 1
                try:
                    reason = check_case(case)
                except Exception as exc:  # noqa: BLE001 - report every failing case at once
                    reason = f"{type(exc).__name__}: {exc}"
                if case.name in SPEC_DEPARTURES:
                    if reason is None:
                        failures.append(f"{case.name}: passes now; drop it from SPEC_DEPARTURES")
                    continue
                if reason:
                    failures.append(f"{case.name}: {reason}")
    assert count > 0 or family == "random"
    assert not failures, "\n".join(failures)


def test_every_nn_op_has_a_kernel_at_every_version():
    import onnx.defs

    missing = []
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain in ("", "ai.onnx") and schema.name in ALL_OPS:
            if registry.lookup("", schema.name, schema.since_version) is None:
                missing.append(f"{schema.name}-{schema.since_version}")
    assert not missing


def test_nn_kernels_are_independent_of_the_oracles():
    for path in KERNEL_DIR.glob("nn_*.py"):
        text = path.read_text()
        assert "onnx.reference" not in text, path.name
        assert "operator_cases" not in text, path.name


# --------------------------------------------------------------------------- brute-force Conv


def brute_conv(x, w, b, group, strides, dilations, pads_b, pads_e):
    N, C, H, W = x.shape
    M, Cg, KH, KW = w.shape
    OH = (H + pads_b[0] + pads_e[0] - (KH - 1) * dilations[0] - 1) // strides[0] + 1
    OW = (W + pads_b[1] + pads_e[1] - (KW - 1) * dilations[1] - 1) // strides[1] + 1
    y = np.zeros((N, M, OH, OW), dtype=np.float64)
    Mg = M // group
    for n, m, oh, ow in itertools.product(range(N), range(M), range(OH), range(OW)):
        g = m // Mg
        acc = 0.0 if b is None else float(b[m])
        for c, kh, kw in itertools.product(range(Cg), range(KH), range(KW)):
            ih = oh * strides[0] - pads_b[0] + kh * dilations[0]
            iw = ow * strides[1] - pads_b[1] + kw * dilations[1]
            if 0 <= ih < H and 0 <= iw < W:
                acc += float(x[n, g * Cg + c, ih, iw]) * float(w[m, c, kh, kw])
        y[n, m, oh, ow] = acc
    return y


@st.composite
def conv_configs(draw):
    group = draw(st.sampled_from([1, 1, 2, 3]))
    cg = draw(st.integers(1, 3))
    mg = draw(st.integers(1, 3))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    pads = [draw(st.integers(0, k - 1)) for k in (kh, kw, kh, kw)]
    H = draw(st.integers((kh - 1) * dh + 1, 9))
    W = draw(st.integers((kw - 1) * dw + 1, 9))
    N = draw(st.integers(1, 2))
    bias = draw(st.booleans())
    seed = draw(st.integers(0, 2**16))
    return dict(group=group, cg=cg, mg=mg, k=(kh, kw), s=(sh, sw), d=(dh, dw), pads=pads, H=H, W=W, N=N,
                bias=bias, seed=seed)


@settings(max_examples=40, deadline=None)
@given(conv_configs())
def test_conv_matches_brute_force(cfg):
    rng = np.random.default_rng(cfg["seed"])
    C, M = cfg["cg"] * cfg["group"], cfg["mg"] * cfg["group"]
    x = rng.standard_normal((cfg["N"], C, cfg["H"], cfg["W"])).astype(np.float32)
    w = rng.standard_normal((M, cfg["cg"]) + cfg["k"]).astype(np.float32)
    b = rng.standard_normal(M).astype(np.float32) if cfg["bias"] else None
    (y,) = run_node("Conv", [x, w, b], group=cfg["group"], strides=list(cfg["s"]),
                    dilations=list(cfg["d"]), pads=cfg["pads"], kernel_shape=list(cfg["k"]))
    expected = brute_conv(x, w, b, cfg["group"], cfg["s"], cfg["d"], cfg["pads"][:2], cfg["pads"][2:])
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("stride", [1, 2])
def test_conv_auto_pad_matches_brute_force(auto_pad, stride):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 7, 6)).astype(np.float32)
    w = rng.standard_normal((3, 2, 4, 3)).astype(np.float32)
    (y,) = run_node("Conv", [x, w], auto_pad=auto_pad, strides=[stride, stride])
    pads_b, pads_e = [0, 0], [0, 0]
    if auto_pad != "VALID":
        for i, (L, k) in enumerate(zip(x.shape[2:], w.shape[2:])):
            total = max(0, (math.ceil(L / stride) - 1) * stride + k - L)
            small = total // 2
            pads_b[i], pads_e[i] = (small, total - small) if auto_pad == "SAME_UPPER" else (total - small, small)
    expected = brute_conv(x, w, None, 1, (stride, stride), (1, 1), pads_b, pads_e)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


def test_large_conv_uses_chunked_im2col_and_matches_small_path():
    from harness.backends.kernels import nn_conv

    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 16, 40, 33)).astype(np.float32)
    w = rng.standard_normal((8, 8, 3, 3)).astype(np.float32)
    attrs = dict(group=2, pads=[1, 0, 2, 1], strides=[2, 1], dilations=[1, 2])
    (big,) = run_node("Conv", [x, w], **attrs)
    saved = nn_conv._COLS_CHUNK_BYTES
    try:
        nn_conv._COLS_CHUNK_BYTES = 1 << 40  # force the single im2col path
        (single,) = run_node("Conv", [x, w], **attrs)
        nn_conv._COLS_CHUNK_BYTES = 1 << 12  # force many small chunks
        (chunked,) = run_node("Conv", [x, w], **attrs)
    finally:
        nn_conv._COLS_CHUNK_BYTES = saved
    np.testing.assert_allclose(big, single, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(chunked, single, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("strides", [(2, 2), (3, 2)])
def test_im2col_of_a_strided_7x7_reads_the_phases_of_the_input_with_the_same_values(strides):
    # 49 kernel positions on 4 (6) phases: the padded input is split into its phases once and
    # every window is a run of consecutive elements of one phase
    from harness.backends.kernels.nn_util import im2col, tap_sources

    rng = np.random.default_rng(13)
    xp = rng.standard_normal((2, 3, 23, 20)).astype(np.float32)
    out = [(23 - 7) // strides[0] + 1, (20 - 7) // strides[1] + 1]
    assert all(src is not xp and src.flags.c_contiguous for src, _, _ in tap_sources(xp, [7, 7], strides, [1, 1]))
    cols = im2col(xp, [7, 7], out, strides, [1, 1])
    expected = np.stack([xp[:, :, i : i + (out[0] - 1) * strides[0] + 1 : strides[0], j : j + (out[1] - 1) * strides[1] + 1 : strides[1]]
                         for i in range(7) for j in range(7)], axis=2).reshape(cols.shape)
    np.testing.assert_array_equal(cols, expected)


@pytest.mark.parametrize("kernel, strides", [([3, 3], [2, 2]), ([7, 7], [1, 1]), ([1, 1], [2, 2])])
def test_im2col_reads_the_input_itself_with_under_four_positions_a_phase(kernel, strides):
    # 3x3/2: 9 positions on 4 phases (2.25 a phase, measured no faster split); unit strides and
    # 1x1 have nothing to split
    from harness.backends.kernels.nn_util import tap_sources

    xp = np.zeros((1, 2, 9, 9), np.float32)
    assert all(src is xp for src, _, _ in tap_sources(xp, kernel, strides, [1, 1]))


def test_chunked_strided_7x7_conv_matches_brute_force(monkeypatch):
    from harness.backends.kernels import nn_conv

    rng = np.random.default_rng(14)
    x = rng.standard_normal((2, 3, 21, 18)).astype(np.float32)
    w = rng.standard_normal((4, 3, 7, 7)).astype(np.float32)
    monkeypatch.setattr(nn_conv, "_COLS_CHUNK_BYTES", 3 * 49 * 2 * 9 * 4)  # two output rows a chunk
    (y,) = run_node("Conv", [x, w], strides=[2, 2], pads=[3, 3, 3, 2])
    expected = brute_conv(x, w, None, 1, [2, 2], [1, 1], [3, 3], [3, 2])
    assert y.shape == expected.shape == (2, 4, 11, 9)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


def test_conv_transpose_is_the_adjoint_of_conv():
    # <conv(x, w), y> == <x, conv_transpose(y, w)> for matching strides/pads/dilations
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 4, 9, 8)).astype(np.float64)
    w = rng.standard_normal((6, 2, 3, 2)).astype(np.float64)  # group 2: C=4 -> M=6
    attrs = dict(group=2, strides=[2, 1], pads=[1, 0, 1, 1], dilations=[1, 2])
    (cx,) = run_node("Conv", [x, w], **attrs)
    y = rng.standard_normal(cx.shape)
    wt = w  # ConvTranspose weights are (C_in, M_out / group, ...): conv's (M, C / group, ...) as is
    out_pad = [x.shape[2 + i] - ((cx.shape[2 + i] - 1) * attrs["strides"][i] + (w.shape[2 + i] - 1) * attrs["dilations"][i] + 1 - attrs["pads"][i] - attrs["pads"][i + 2]) for i in range(2)]
    (ty,) = run_node("ConvTranspose", [y, wt], output_padding=out_pad, **attrs)
    assert ty.shape == x.shape
    np.testing.assert_allclose(np.vdot(cx, y), np.vdot(x, ty), rtol=1e-9)


# --------------------------------------------------------------------------- brute-force pools


def brute_pool(x, kind, kernel, strides, dilations, pads, ceil_mode, count_include_pad):
    N, C, H, W = x.shape
    pb, pe = pads[:2], pads[2:]
    out = []
    for i, L in enumerate((H, W)):
        span = L + pb[i] + pe[i] - (kernel[i] - 1) * dilations[i] - 1
        o = (-(-span // strides[i]) if ceil_mode else span // strides[i]) + 1
        if ceil_mode and (o - 1) * strides[i] >= L + pb[i]:
            o -= 1
        out.append(o)
    y = np.zeros((N, C, out[0], out[1]), dtype=np.float64)
    idx = np.zeros(y.shape, dtype=np.int64)
    for n, c, oh, ow in itertools.product(range(N), range(C), range(out[0]), range(out[1])):
        vals, where, padded = [], [], 0
        for kh, kw in itertools.product(range(kernel[0]), range(kernel[1])):
            ih = oh * strides[0] - pb[0] + kh * dilations[0]
            iw = ow * strides[1] - pb[1] + kw * dilations[1]
            if 0 <= ih < H and 0 <= iw < W:
                vals.append(float(x[n, c, ih, iw]))
                where.append(((n * C + c) * H + ih) * W + iw)
            elif -pb[0] <= ih < H + pe[0] and -pb[1] <= iw < W + pe[1]:
                padded += 1
        if kind == "max":
            k = int(np.argmax(vals))
            y[n, c, oh, ow], idx[n, c, oh, ow] = vals[k], where[k]
        else:
            y[n, c, oh, ow] = sum(vals) / (len(vals) + (padded if count_include_pad else 0))
    return y, idx


@st.composite
def pool_configs(draw):
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    pads = [draw(st.integers(0, k - 1)) for k in (kh, kw, kh, kw)]
    return dict(
        kernel=[kh, kw], strides=[draw(st.integers(1, 3)), draw(st.integers(1, 3))], dilations=[dh, dw],
        pads=pads, ceil_mode=draw(st.integers(0, 1)), count_include_pad=draw(st.integers(0, 1)),
        H=draw(st.integers((kh - 1) * dh + 1, 9)), W=draw(st.integers((kw - 1) * dw + 1, 9)),
        seed=draw(st.integers(0, 2**16)),
    )


@settings(max_examples=40, deadline=None)
@given(pool_configs())
def test_maxpool_matches_brute_force(cfg):
    rng = np.random.default_rng(cfg["seed"])
    x = rng.standard_normal((2, 3, cfg["H"], cfg["W"])).astype(np.float32)
    attrs = dict(kernel_shape=cfg["kernel"], strides=cfg["strides"], dilations=cfg["dilations"],
                 pads=cfg["pads"], ceil_mode=cfg["ceil_mode"])
    y, ind = run_node("MaxPool", [x], outputs=("y", "ind"), **attrs)
    (y_only,) = run_node("MaxPool", [x], **attrs)
    ey, eind = brute_pool(x, "max", cfg["kernel"], cfg["strides"], cfg["dilations"], cfg["pads"],
                          cfg["ceil_mode"], 0)
    assert y.dtype == np.float32 and ind.dtype == np.int64
    np.testing.assert_array_equal(y, ey.astype(np.float32))
    np.testing.assert_array_equal(y_only, y)
    np.testing.assert_array_equal(ind, eind)


@settings(max_examples=40, deadline=None)
@given(pool_configs())
def test_averagepool_matches_brute_force(cfg):
    rng = np.random.default_rng(cfg["seed"])
    x = rng.standard_normal((1, 2, cfg["H"], cfg["W"])).astype(np.float32)
    (y,) = run_node("AveragePool", [x], kernel_shape=cfg["kernel"], strides=cfg["strides"],
                    dilations=cfg["dilations"], pads=cfg["pads"], ceil_mode=cfg["ceil_mode"],
                    count_include_pad=cfg["count_include_pad"])
    ey, _ = brute_pool(x, "avg", cfg["kernel"], cfg["strides"], cfg["dilations"], cfg["pads"],
                       cfg["ceil_mode"], cfg["count_include_pad"])
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, ey, rtol=1e-5, atol=1e-6)


def test_maxpool_storage_order_column_major_indices():
    x = np.arange(2 * 4 * 5, dtype=np.float32).reshape(1, 2, 4, 5)
    _, ind = run_node("MaxPool", [x], outputs=("y", "i"), kernel_shape=[2, 2], storage_order=1)
    # column-major within each (n, c) plane: h + w * H, plus the plane offset
    n_c, h, w = 1, 1, 1
    assert ind[0, 1, 0, 0] == n_c * 20 + h + w * 4


def test_maxpool_integer_input_keeps_dtype():
    x = np.array([[[[1, 200], [3, 4]]]], dtype=np.uint8)
    (y,) = run_node("MaxPool", [x], kernel_shape=[2, 2], pads=[1, 1, 1, 1], strides=[2, 2])
    assert y.dtype == np.uint8
    np.testing.assert_array_equal(y, [[[[1, 200], [3, 4]]]])


# --------------------------------------------------------------------------- dtypes and misc


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, "bfloat16"])
def test_float_dtype_is_preserved(dtype):
    import ml_dtypes

    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 4, 6, 6)).astype(dt)
    w = rng.standard_normal((2, 4, 3, 3)).astype(dt)
    c = np.ones(4, dtype=dt)
    z = np.zeros(4, dtype=dt)
    checks = {
        "Conv": run_node("Conv", [x, w])[0],
        "MaxPool": run_node("MaxPool", [x], kernel_shape=[2, 2])[0],
        "AveragePool": run_node("AveragePool", [x], kernel_shape=[2, 2])[0],
        "GlobalAveragePool": run_node("GlobalAveragePool", [x])[0],
        "BatchNormalization": run_node("BatchNormalization", [x, c, z, z, c], opset=15)[0],
        "InstanceNormalization": run_node("InstanceNormalization", [x, c, z])[0],
        "Resize": run_node("Resize", [x, None, np.array([1, 1, 2, 2], np.float32)], opset=19, mode="linear")[0],
    }
    for op, y in checks.items():
        assert y.dtype == dt, op


def test_lstm_with_sequence_lengths_matches_per_sequence_runs():
    rng = np.random.default_rng(1)
    T, B, I, H = 5, 3, 4, 6
    x = rng.standard_normal((T, B, I)).astype(np.float32)
    W = rng.standard_normal((2, 4 * H, I)).astype(np.float32) * 0.5
    R = rng.standard_normal((2, 4 * H, H)).astype(np.float32) * 0.5
    Bb = rng.standard_normal((2, 8 * H)).astype(np.float32) * 0.1
    lens = np.array([5, 2, 3], dtype=np.int32)
    y, yh, yc = run_node("LSTM", [x, W, R, Bb, lens], outputs=("Y", "Y_h", "Y_c"), hidden_size=H,
                         direction="bidirectional")
    for b in range(B):
        L = int(lens[b])
        y1, yh1, yc1 = run_node("LSTM", [x[:L, b : b + 1], W, R, Bb], outputs=("Y", "Y_h", "Y_c"), hidden_size=H,
                                direction="bidirectional")
        np.testing.assert_allclose(y[:L, :, b], y1[:, :, 0], rtol=1e-5, atol=1e-6)
        assert not np.any(y[L:, :, b])
        np.testing.assert_allclose(yh[:, b], yh1[:, 0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(yc[:, b], yc1[:, 0], rtol=1e-5, atol=1e-6)


def test_lstm_fast_path_equals_general_path():
    rng = np.random.default_rng(2)
    T, B, I, H = 6, 2, 3, 4
    x = rng.standard_normal((T, B, I)).astype(np.float32)
    W = rng.standard_normal((1, 4 * H, I)).astype(np.float32)
    R = rng.standard_normal((1, 4 * H, H)).astype(np.float32)
    fast = run_node("LSTM", [x, W, R], outputs=("Y", "Y_h"), hidden_size=H)
    # a huge clip leaves the values alone but takes the general path
    general = run_node("LSTM", [x, W, R], outputs=("Y", "Y_h"), hidden_size=H, clip=1e30)
    for a, b in zip(fast, general):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_random_ops_shape_dtype_range_and_seed():
    (u,) = run_node("RandomUniform", [], shape=[3, 4], low=2.0, high=3.0, seed=1.0, dtype=11)
    assert u.shape == (3, 4) and u.dtype == np.float64 and u.min() >= 2 and u.max() < 3
    (u2,) = run_node("RandomUniform", [], shape=[3, 4], low=2.0, high=3.0, seed=1.0, dtype=11)
    np.testing.assert_array_equal(u, u2)
    (n,) = run_node("RandomNormalLike", [np.zeros((100, 50), np.float16)], mean=5.0, scale=0.1)
    assert n.dtype == np.float16 and abs(float(n.astype(np.float32).mean()) - 5) < 0.05
    (m,) = run_node("Multinomial", [np.log(np.array([[0.0001, 0.9999]], np.float32))], sample_size=20)
    assert m.shape == (1, 20) and m.dtype == np.int32 and set(np.unique(m)) <= {0, 1}
    y, mask = run_node("Dropout", [np.ones((1000,), np.float32), np.array(0.5, np.float32), np.array(True)],
                       opset=13, outputs=("y", "mask"), seed=0)
    assert mask.dtype == np.bool_ and set(np.unique(y)) <= {0.0, 2.0} and np.array_equal(y != 0, mask)


@pytest.mark.parametrize("opset", [7, 10, 13])
def test_inference_dropout_passes_its_input_through_and_builds_a_mask_only_when_named(opset):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    alone = run_node("Dropout", [x], opset=opset, ratio=0.3)
    assert len(alone) == 1 and alone[0] is x  # Y = X, no mask computed for nobody
    y, mask = run_node("Dropout", [x], opset=opset, outputs=("y", "mask"), ratio=0.3)
    assert y is x and mask.shape == x.shape and mask.all()
    assert mask.dtype == (np.bool_ if opset >= 10 else np.float32)


# --------------------------------------------------------------------------- MelWeightMatrix, RoiAlign


def test_mel_weight_matrix_matches_a_hand_computed_case():
    # 2 bands over 0..4000 Hz: mel(4000) = 2146.06, edges every 2146.06 / 4 mel: 0, 536.5, 1073.0,
    # 1609.5 mel = 0, 426.8, 1113.9, 2220.1 Hz, on bins floor(f * 65 / 8000) = 0, 3, 9, 18
    (w,) = run_node("MelWeightMatrix", [np.int64(2), np.int64(64), np.int64(8000), np.float32(0), np.float32(4000)],
                    opset=17, output_datatype=onnx.TensorProto.DOUBLE)
    expected = np.zeros((33, 2))
    expected[0:4, 0] = [0, 1 / 3, 2 / 3, 1]  # band 0 rises over bins 0..3, falls to 0 at bin 9
    expected[4:9, 0] = [5 / 6, 4 / 6, 3 / 6, 2 / 6, 1 / 6]
    expected[3:10, 1] = [k / 6 for k in range(7)]  # band 1 rises over bins 3..9, falls to 0 at bin 18
    expected[10:18, 1] = [k / 9 for k in range(8, 0, -1)]
    assert w.dtype == np.float64
    np.testing.assert_allclose(w, expected, rtol=0, atol=1e-15)


def test_mel_weight_matrix_band_with_edges_on_one_bin_is_a_single_one():
    # 8 bands over 0..4096 Hz at 8192 Hz, dft 16: the first edges share bins 0 and 1
    (w,) = run_node("MelWeightMatrix", [np.int32(8), np.int32(16), np.int32(8192), np.float32(0), np.float32(4096)], opset=17)
    assert w.dtype == np.float32 and w.shape == (9, 8)
    assert set(np.unique(w)) == {0.0, 1.0} and (w.max(axis=0) == 1).all()  # every band peaks at exactly 1


@pytest.mark.parametrize("mode", ["avg", "max"])
def test_roi_align_pools_bilinear_sample_values(mode):
    # one sample at the centre of a 2x2 map: its interpolated value is the mean 2.5 in both modes
    # (the largest weighted corner, 0.25 * 4 = 1, is not what the spec's "max" pools)
    x = np.array([[[[1, 2], [3, 4]]]], np.float32)
    rois = np.array([[0, 0, 2, 2]], np.float32)
    (y,) = run_node("RoiAlign", [x, rois, np.array([0], np.int64)], opset=16, mode=mode,
                    output_height=1, output_width=1, sampling_ratio=1)
    np.testing.assert_allclose(y, [[[[2.5]]]], rtol=1e-6)


def test_roi_align_max_is_the_largest_interpolated_sample():
    # the roi 0.5..2.5 shifted by half a pixel is 0..2: 2 x 2 samples at 0.5 and 1.5 on each axis,
    # the bilinear means of the four 2 x 2 blocks of a 3 x 3 map
    x = np.arange(9, dtype=np.float64).reshape(1, 1, 3, 3)
    rois = np.array([[0.5, 0.5, 2.5, 2.5]], np.float64)
    (y,) = run_node("RoiAlign", [x, rois, np.array([0], np.int64)], opset=16, mode="max",
                    output_height=1, output_width=1, sampling_ratio=2)
    blocks = [x[0, 0, i:i + 2, j:j + 2].mean() for i in (0, 1) for j in (0, 1)]  # 2, 3, 5, 6
    assert y.item() == pytest.approx(max(blocks))


def test_rnn_thresholded_relu_keeps_x_at_alpha_and_empty_shapes_run():
    # the recurrent ops' table: "ThresholdedRelu(x) - x if x >= alpha else 0"; Ht = f(Xt * W) with W = 1, R = 0
    one = np.ones((1, 1, 1), np.float32)
    (y,) = run_node("RNN", [one, one, np.zeros((1, 1, 1), np.float32)], outputs=("Y",), hidden_size=1,
                    activations=["ThresholdedRelu"], activation_alpha=[1.0])
    assert y.ravel().tolist() == [1.0]
    # seq_length 0 and batch 0: empty Y, Y_h the initial state (zeros when absent)
    W, R = np.ones((1, 4, 2), np.float32), np.ones((1, 4, 1), np.float32)
    y, yh, yc = run_node("LSTM", [np.zeros((0, 2, 2), np.float32), W, R], outputs=("Y", "Y_h", "Y_c"), hidden_size=1)
    assert y.shape == (0, 1, 2, 1) and yh.shape == (1, 2, 1) and not yh.any() and not yc.any()
    y, yh = run_node("GRU", [np.zeros((3, 0, 2), np.float32), W[:, :3], R[:, :3]], outputs=("Y", "Y_h"), hidden_size=1)
    assert y.shape == (3, 1, 0, 1) and yh.shape == (1, 0, 1)


# -- found by the operators suite: padding never wins an argmax, 1-D BatchNormalization ----------
@pytest.mark.parametrize("dtype, low", [(np.float32, -np.inf), (np.int8, -128), (np.uint8, 0)])
def test_max_pool_indices_never_point_into_padding(dtype, low):
    # every value of the first window equals the padding's fill: its index is the input's first
    x = np.array([[[[low, low], [low, 5]]]], dtype=dtype)
    y, idx = run_node("MaxPool", [x], outputs=("y", "i"), kernel_shape=[2, 2], pads=[1, 1, 0, 0])
    assert y[0, 0].tolist() == [[low, low], [low, 5]]
    assert idx[0, 0].tolist() == [[0, 0], [0, 3]]  # the first of equal values, always an input element


def test_batch_normalization_of_one_dimensional_input_keeps_its_shape():
    # "The op also accepts single dimension input of size N in which case C is assumed to be 1"
    x = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    one = lambda v: np.array([v], dtype=np.float32)  # noqa: E731
    (y,) = run_node("BatchNormalization", [x, one(2.0), one(0.5), one(1.0), one(4.0)], opset=15)
    assert y.shape == (3,)
    np.testing.assert_allclose(y, 2 * (x - 1) / math.sqrt(4 + 1e-5) + 0.5, rtol=1e-6)


def test_pow_takes_the_exponent_in_its_own_wider_type():
    # float16 0 ** float32 -6e-27: the exponent is negative, the result +inf (not 0 ** -0 = 1)
    (y,) = run_node("Pow", [np.array([0.0, 2.0], np.float16), np.array([-5.9e-27, 3.0], np.float32)], opset=15)
    assert y.dtype == np.float16 and y.tolist() == [np.inf, 8.0]


def test_resize_linear_on_64_bit_integers_is_exact():
    """int64 data with linear weights: the average of -2^63 and 2^63 - 1 weighted 2/3, 1/3 is exactly
    -3074457345618258603 (float64 weights and data gave -3074457345618259968)."""
    node = helper.make_node("Upsample", ["x", "s"], ["y"], mode="linear")
    x = np.array([[[[-2**63, 2**63 - 1]]]], np.int64)
    (y,) = bind(node, 9)(x, np.array([1, 1, 1, 3], np.float32))
    assert y.reshape(-1).tolist() == [-2**63, -3074457345618258603, 3074457345618258602] + [2**63 - 1] * 3
    (y,) = bind(node, 9)(np.array([[[[-5, 7]]]], np.int32), np.array([1, 1, 1, 3], np.float32))
    assert y.dtype == np.int32 and y.reshape(-1).tolist() == [-5, -1, 3, 7, 7, 7]


# -- speed without a changed bit: kernels planned once, writing into dying intermediates --------
def _bn_after_relu_model(opset=15, dtype=onnx.TensorProto.FLOAT, c=3):
    rng = np.random.default_rng(1)
    np_type = helper.tensor_dtype_to_np_dtype(dtype)
    params = [numpy_helper.from_array((rng.random(c) + 0.5).astype(np_type), n) for n in ("s", "b", "m", "v")]
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("BatchNormalization", ["r", "s", "b", "m", "v"], ["y"])],
        "g", [helper.make_tensor_value_info("x", dtype, [2, c, 4, 5])], [helper.make_tensor_value_info("y", dtype, [2, c, 4, 5])],
        params,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), [numpy_helper.to_array(p) for p in params]


@pytest.mark.parametrize("opset", [9, 15])
def test_batch_normalization_writes_into_a_dying_input_with_the_same_bits(opset):
    from harness.backends.kernels import KernelsBackend

    model, (s, b, m, v) = _bn_after_relu_model(opset)
    session = KernelsBackend().prepare(model)
    assert session.plan.steps[-1][4], "BatchNormalization should run in place on Relu's output"
    x = np.random.default_rng(2).standard_normal((2, 3, 4, 5)).astype(np.float32)
    before = x.copy()
    (y,) = session.run({"x": x})
    np.testing.assert_array_equal(x, before)  # the graph input is never overwritten
    ch = (1, 3, 1, 1)
    inv = (s / np.sqrt(v + np.float32(1e-5))).reshape(ch)
    shift = b.reshape(ch) - m.reshape(ch) * inv
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, np.maximum(x, 0) * inv + shift)  # the same two float32 roundings


@pytest.mark.parametrize("kind", ["MaxPool", "AveragePool"])
def test_pooling_in_blocks_of_channels_changes_no_bit(kind, monkeypatch):
    from harness.backends.kernels import nn_pool

    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 5, 9, 8)).astype(np.float32)
    x[0, 1, :3, :3] = 0.0
    attrs = dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1], ceil_mode=1)
    (whole,) = run_node(kind, [x], **attrs)
    blocks = []
    reduce = nn_pool._separable_reduce
    monkeypatch.setattr(nn_pool, "_separable_reduce", lambda x, *a: blocks.append(x.shape) or reduce(x, *a))
    monkeypatch.setattr(nn_pool, "_POOL_BLOCKED", 1024)
    monkeypatch.setattr(nn_pool, "_POOL_BLOCK", 3 * 9 * 8 * 4)  # three channels a block
    (blocked,) = run_node(kind, [x], **attrs)
    assert blocks == [(1, 3, 9, 8)] * 3 + [(1, 1, 9, 8)]
    np.testing.assert_array_equal(blocked, whole)
    expected, _ = brute_pool(x, "max" if kind == "MaxPool" else "avg", [3, 2], [2, 1], [1, 1], [1, 0, 1, 1], 1, 0)
    np.testing.assert_allclose(blocked, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_depthwise_conv_matches_brute_force(dtype, monkeypatch):
    # group = C = M, unit strides: one filter per channel (ShuffleNet's and MobileNet's 3x3 convs)
    from harness.backends.kernels import nn_conv

    calls = []
    depthwise = nn_conv._depthwise
    monkeypatch.setattr(nn_conv, "_depthwise", lambda *a: calls.append(1) or depthwise(*a))
    rng = np.random.default_rng(3)
    C = 5
    x = rng.standard_normal((2, C, 9, 8)).astype(dtype)
    w = rng.standard_normal((C, 1, 3, 2)).astype(dtype)
    b = rng.standard_normal(C).astype(dtype)
    (y,) = run_node("Conv", [x, w, b], group=C, dilations=[1, 2], pads=[1, 0, 2, 1], kernel_shape=[3, 2])
    expected = brute_conv(x, w, b, C, [1, 1], [1, 2], [1, 0], [2, 1])
    assert calls == [1] and y.dtype == dtype and y.shape == expected.shape
    tol = 1e-2 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(y.astype(np.float64), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("block_channels", [1, 2, 5])
@pytest.mark.parametrize("strides", [(1, 1), (2, 3)])
def test_depthwise_conv_in_blocks_of_channels_matches_brute_force(block_channels, strides, monkeypatch):
    # the channels go through in blocks of the cache budget: 5 channels in blocks of 1, of
    # 2 (the last block one channel) and all at once give the brute-force sums; unit strides
    # compute rows of the padded width (7 rows of 9 + 1 + 3), strides (2, 3) rows of a phase's
    # width (4 rows of 3: the 9 x 8 padded frame in phases of 5 x 3 at most) for the 4 x 2
    # outputs, the last input column in no window
    from harness.backends.kernels import nn_conv

    rng = np.random.default_rng(8)
    N, C, K = 3, 5, 3 * 3
    x = rng.standard_normal((N, C, 6, 9)).astype(np.float32)
    w = rng.standard_normal((C, 1, 3, 3)).astype(np.float32)
    unit = strides == (1, 1)
    pads = [2, 1, 1, 3] if unit else [2, 0, 1, 0]
    out_positions = 7 * 13 if unit else 4 * 3
    monkeypatch.setattr(nn_conv, "_DEPTHWISE_BLOCK_BYTES", block_channels * (K + 1) * N * out_positions * 4)
    blocks = []
    matmul = np.matmul
    monkeypatch.setattr(nn_conv.np, "matmul", lambda a, b, **kw: blocks.append(a.shape[0]) or matmul(a, b, **kw))
    (y,) = run_node("Conv", [x, w], group=C, pads=pads, dilations=[1, 2], strides=list(strides))
    expected = brute_conv(x, w, None, C, list(strides), [1, 2], pads[:2], pads[2:])
    assert y.shape == expected.shape == (N, C) + ((7, 9) if unit else (4, 2))
    assert blocks == [block_channels] * (C // block_channels) + ([C % block_channels] if C % block_channels else [])
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("strides", [(1, 1), (2, 1)])
def test_unit_stride_depthwise_copies_every_kernel_positions_run_in_one_copy(strides, monkeypatch):
    # with unit strides the runs of the 3 x 2 kernel positions (dilated 1 x 2) form a strided
    # grid over the padded planes, copied as one view; with strides, one copy per position
    from harness.backends.kernels import nn_conv

    views = []
    as_strided = np.lib.stride_tricks.as_strided
    monkeypatch.setattr(np.lib.stride_tricks, "as_strided", lambda *a, **k: views.append(a[1]) or as_strided(*a, **k))
    monkeypatch.setattr(nn_conv, "_DEPTHWISE_BLOCK_BYTES", 1)  # a channel a block: the view is sliced per block
    rng = np.random.default_rng(18)
    C = 3
    x = rng.standard_normal((2, C, 7, 8)).astype(np.float32)
    w = rng.standard_normal((C, 1, 3, 2)).astype(np.float32)
    (y,) = run_node("Conv", [x, w], group=C, strides=list(strides), dilations=[1, 2], pads=[1, 2, 1, 0])
    expected = brute_conv(x, w, None, C, strides, [1, 2], [1, 2], [1, 0])
    unit = strides == (1, 1)
    assert views == ([(1, 3, 2, 2, 7 * 10)] if unit else [])  # (block, kernel..., N, 7 rows of 8 + 2)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("spatial", [(11,), (5, 4, 6)])
def test_depthwise_conv_in_one_and_three_dimensions_is_a_conv_per_channel(spatial):
    rng = np.random.default_rng(4)
    C, nsp = 4, len(spatial)
    x = rng.standard_normal((2, C) + spatial).astype(np.float32)
    w = rng.standard_normal((C, 1) + (3,) * nsp).astype(np.float32)
    attrs = dict(pads=[1] * nsp + [2] * nsp, dilations=[2] + [1] * (nsp - 1))
    (y,) = run_node("Conv", [x, w], group=C, **attrs)
    for c in range(C):
        (yc,) = run_node("Conv", [x[:, c:c + 1], w[c:c + 1]], **attrs)
        np.testing.assert_array_equal(y[:, c:c + 1], yc)


def test_a_conv_session_keeps_no_buffer_between_runs():
    # buffers kept per Conv node (padded input, im2col chunk) doubled ShuffleNet's peak memory
    import gc
    import tracemalloc

    from harness.backends.kernels import KernelsBackend

    rng = np.random.default_rng(6)
    w = numpy_helper.from_array(rng.standard_normal((8, 8, 3, 3)).astype(np.float32), "w")
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], "g",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 8, 64, 64])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 8, 64, 64])], [w])
    session = KernelsBackend().prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]))
    x = rng.standard_normal((1, 8, 64, 64)).astype(np.float32)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2):
            (y,) = session.run({"x": x})
            del y
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 8 * 66 * 66 * 4 // 2, f"{kept} bytes kept (the padded input is {8 * 66 * 66 * 4})"


def test_batch_normalization_computes_its_factors_once_per_parameter_arrays(monkeypatch):
    from harness.backends.kernels import nn_norm

    calls = []
    factors = nn_norm._bn_factors
    monkeypatch.setattr(nn_norm, "_bn_factors", lambda *a: calls.append(a[-2:]) or factors(*a))
    fn = bind(helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"]), 15)
    rng = np.random.default_rng(3)
    s, b, m = (rng.standard_normal(3).astype(np.float32) for _ in range(3))
    v = rng.random(3).astype(np.float32)

    def expected(x, s, b, m, v):
        acc = x.dtype.type
        inv = (s.astype(acc) / np.sqrt(v.astype(acc) + acc(1e-5))).reshape(1, 3, 1)
        return x * inv + (b.astype(acc).reshape(1, 3, 1) - m.astype(acc).reshape(1, 3, 1) * inv)

    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for _ in range(2):  # the same parameter arrays: computed once
        np.testing.assert_array_equal(fn(x, s, b, m, v)[0], expected(x, s, b, m, v))
    assert calls == [(np.float32, 3)]
    s2 = s * 2  # a new array: computed again, with its values
    np.testing.assert_array_equal(fn(x, s2, b, m, v)[0], expected(x, s2, b, m, v))
    x64 = x.astype(np.float64)  # another accumulation type: computed again
    np.testing.assert_array_equal(fn(x64, s2, b, m, v)[0], expected(x64, s2, b, m, v))
    assert calls == [(np.float32, 3), (np.float32, 3), (np.float64, 3)]


def _shifted_axes(monkeypatch) -> list[int]:
    """The axes pooling reduces as one shifted operation over the whole array, as it does so."""
    from harness.backends.kernels import nn_pool

    calls: list[int] = []
    shifted = nn_pool._reduce_axis_shifted
    monkeypatch.setattr(nn_pool, "_reduce_axis_shifted", lambda y, ax, *a, **kw: calls.append(ax) or shifted(y, ax, *a, **kw))
    return calls


@pytest.mark.parametrize("kind", ["MaxPool", "AveragePool"])
def test_pooling_with_unit_strides_shifts_the_whole_array_with_the_same_bits(kind, monkeypatch):
    # 3x3, unit strides, one pixel of padding (Inception's pools): each axis is one shifted
    # operation over the flattened array; the outputs whose tap falls off a row are restored
    calls = _shifted_axes(monkeypatch)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    (y,) = run_node(kind, [x], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    assert calls == ([2, 3] if kind == "MaxPool" else [3, 2])  # MaxPool starts with the outer axis
    if kind == "MaxPool":
        xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)], constant_values=-np.inf)
        rows = np.maximum(np.maximum(xp[:, :, 1:-1], xp[:, :, :-2]), xp[:, :, 2:])
        expected = np.maximum(np.maximum(rows[..., 1:-1], rows[..., :-2]), rows[..., 2:])
    else:  # the window sum in the same order: along the last axis (centre, left, right), then the rows
        xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
        cols = xp[..., 1:-1] + xp[..., :-2] + xp[..., 2:]
        sums = cols[:, :, 1:-1] + cols[:, :, :-2] + cols[:, :, 2:]
        count = np.array([2, 3, 3, 3, 2], np.float32)[:, None] * np.array([2, 3, 3, 3, 3, 2], np.float32)
        expected = sums / count
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("kind", ["MaxPool", "AveragePool"])
def test_strided_pooling_reduces_each_axis_densely_then_keeps_every_stride(kind, monkeypatch):
    # 3x3, strides 2, one pixel of padding (ShuffleNet's pools, SqueezeNet's unpadded ones):
    # each axis is reduced at unit stride as one shifted operation, then every second row or
    # column is kept (a strided operation on short rows costs more than the whole axis)
    calls = _shifted_axes(monkeypatch)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 9, 10)).astype(np.float32)
    (y,) = run_node(kind, [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    assert calls == ([2, 3] if kind == "MaxPool" else [3, 2]) and y.shape == (2, 3, 5, 5)
    if kind == "MaxPool":
        expected, _ = brute_pool(x, "max", [3, 3], [2, 2], [1, 1], [1, 1, 1, 1], 0, 0)
    else:  # the window sum in the strided loop's order: along the last axis (centre, left,
        # right; the left tap of the first column is padding), then the rows the same way
        xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
        cols = xp[..., 1:-1:2] + xp[..., 0:-2:2] + xp[..., 2::2]
        sums = cols[:, :, 1:-1:2] + cols[:, :, 0:-2:2] + cols[:, :, 2::2]
        count = np.array([2, 3, 3, 3, 2], np.float32)[:, None] * np.array([2, 3, 3, 3, 3], np.float32)
        expected = sums / count
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("kind", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("attrs", [
    dict(pads=[1, 1, 1, 1], dilations=[1, 2]),  # taps at -1, 1, 3 along the last axis: none at 0
    dict(pads=[1, 1, 1, 1], ceil_mode=1),  # the last window starts on the last column, 8 = 4 * 2 unit-stride windows
])
def test_strided_pooling_keeps_the_strided_loop_outside_its_case(kind, attrs, monkeypatch):
    # the last axis is outside the case (the outer one, 7 rows, is inside it)
    calls = _shifted_axes(monkeypatch)
    rng = np.random.default_rng(12)
    x = rng.standard_normal((1, 2, 7, 8)).astype(np.float32)
    (y,) = run_node(kind, [x], kernel_shape=[3, 3], strides=[2, 2], **attrs)
    expected, _ = brute_pool(x, "max" if kind == "MaxPool" else "avg", [3, 3], [2, 2], attrs.get("dilations", [1, 1]),
                             attrs["pads"], attrs.get("ceil_mode", 0), 0)
    assert calls == [2] and y.shape == expected.shape
    np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("attrs", [
    dict(kernel_shape=[3, 3], strides=[2, 2]),  # SqueezeNet's: no padding, odd sizes (no column restored)
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1]),  # Inception's: padding at the end only
    dict(kernel_shape=[3, 2], strides=[3, 1], pads=[2, 0, 1, 1]),
    dict(kernel_shape=[3, 3], strides=[2, 3], dilations=[2, 1], pads=[2, 1, 2, 0]),
    dict(kernel_shape=[2, 3], strides=[2, 2], pads=[1, 1, 0, 1], ceil_mode=1),
])
def test_strided_pooling_of_an_outer_axis_matches_brute_force(kind, batch, attrs, monkeypatch):
    calls = _shifted_axes(monkeypatch)
    rng = np.random.default_rng(13)
    x = rng.standard_normal((batch, 3, 11, 9)).astype(np.float32)
    (y,) = run_node(kind, [x], **attrs)
    expected, _ = brute_pool(x, "max" if kind == "MaxPool" else "avg", attrs["kernel_shape"], attrs["strides"],
                             attrs.get("dilations", [1, 1]), attrs.get("pads", [0, 0, 0, 0]), attrs.get("ceil_mode", 0), 0)
    assert 2 in calls and y.shape == expected.shape
    if kind == "MaxPool":
        np.testing.assert_array_equal(y, expected.astype(np.float32))
    else:
        np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("strides", [1, 2])
def test_float16_average_pool_adds_every_tap_in_float32(strides):
    # a pooled axis starts from its first two taps combined straight into the output only when
    # the output has the input's type; float16 windows are summed in float32 from the first tap
    rng = np.random.default_rng(15)
    x = (rng.standard_normal((2, 3, 7, 8)) * 1000).astype(np.float16)
    (y,) = run_node("AveragePool", [x], kernel_shape=[1, 3], strides=[1, strides], pads=[0, 1, 0, 1])
    xp = np.pad(x.astype(np.float32), [(0, 0), (0, 0), (0, 0), (1, 1)])
    end = xp.shape[-1] - 2
    sums = xp[..., 1 : end + 1 : strides] + xp[..., 0:end:strides] + xp[..., 2 : end + 2 : strides]
    count = np.full(sums.shape[-1], 3, np.float32)
    count[0] = 2
    if strides == 1:
        count[-1] = 2
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, (sums / count).astype(np.float16))


def _conv_paths(monkeypatch):
    """Records which path each Conv call takes: 'winograd' or 'im2col'."""
    from harness.backends.kernels import nn_conv

    taken = []
    winograd, core = nn_conv.conv_winograd, nn_conv.conv_core
    monkeypatch.setattr(nn_conv, "conv_winograd", lambda *a: taken.append("winograd") or winograd(*a))
    monkeypatch.setattr(nn_conv, "conv_core", lambda *a: taken.append("im2col") or core(*a))
    return taken


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("pads, spatial", [([1, 1, 1, 1], (14, 14)), ([0, 2, 1, 0], (13, 11)), ([2, 2, 2, 2], (9, 16))])
def test_winograd_conv_matches_im2col_within_float_rounding(dtype, pads, spatial, monkeypatch):
    # 3x3, unit strides, group 1, 64+ channels: Winograd's F(2x2, 3x3), odd and even output
    # sizes (the last tile row or column cut), asymmetric pads, a bias; against the float64
    # im2col sum, within what float rounding of a sum of C * 9 products gives either path
    from harness.backends.kernels import nn_conv

    taken = _conv_paths(monkeypatch)
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 70) + spatial).astype(dtype)
    w = rng.standard_normal((66, 70, 3, 3)).astype(dtype)
    b = rng.standard_normal(66).astype(dtype)
    (y,) = run_node("Conv", [x, w, b], pads=pads)
    out, begin, _ = nn_conv.spatial_geometry(spatial, [3, 3], [1, 1], [1, 1], pads)
    exact = nn_conv.conv_core(x.astype(np.float64), w.astype(np.float64), 1, [1, 1], [1, 1], begin, out) + b.reshape(1, -1, 1, 1)
    plain = nn_conv.conv_core(x, w, 1, [1, 1], [1, 1], begin, out) + b.reshape(1, -1, 1, 1)
    assert taken[0] == "winograd" and y.dtype == dtype and y.shape == exact.shape == (2, 66) + tuple(out)
    assert y.flags.c_contiguous
    bound = np.abs(x).max() * np.abs(w).max() * 70 * 9 * np.finfo(dtype).eps * 4
    assert np.abs(y - exact).max() <= bound
    assert np.abs(plain - exact).max() <= bound  # the im2col path is held to the same bound


@pytest.mark.parametrize("change", [
    dict(strides=[2, 2]), dict(dilations=[2, 1]), dict(group=2), dict(channels=32), dict(kernel=(3, 2)), dict(spatial=(7, 7)),
])
def test_winograd_is_not_taken_outside_its_case(change, monkeypatch):
    # strides, dilations, groups, fewer than 64 channels, another kernel, or fewer than 48 2x2
    # output tiles (7 x 7 at batch 1: 16) go through im2col
    taken = _conv_paths(monkeypatch)
    rng = np.random.default_rng(13)
    group = change.get("group", 1)
    channels = change.get("channels", 64)
    x = rng.standard_normal((1, channels) + change.get("spatial", (14, 14))).astype(np.float32)
    w = rng.standard_normal((channels, channels // group) + change.get("kernel", (3, 3))).astype(np.float32)
    attrs = {k: v for k, v in change.items() if k in ("strides", "dilations", "group")}
    (y,) = run_node("Conv", [x, w], pads=[1, 1, 1, 1], **attrs)
    assert taken == ["im2col"]


@pytest.mark.parametrize("pads, dilations", [([1, 1, 1, 1], [1, 1]), ([2, 0, 0, 3], [2, 1])])
def test_conv_with_twice_as_many_inputs_as_outputs_sums_shifted_products(pads, dilations, monkeypatch):
    # group 1, unit strides, C >= 2M (DenseNet's 128 -> 32): the sum over kernel positions of
    # W_k @ the shifted input, per image, no im2col; against the brute-force sums
    from harness.backends.kernels import nn_conv

    taken = []
    shifted, im2col = nn_conv._conv_shifted, nn_conv.im2col
    monkeypatch.setattr(nn_conv, "_conv_shifted", lambda *a: taken.append("shifted") or shifted(*a))
    monkeypatch.setattr(nn_conv, "im2col", lambda *a: taken.append("im2col") or im2col(*a))
    rng = np.random.default_rng(14)
    x = rng.standard_normal((2, 8, 7, 9)).astype(np.float32)
    w = rng.standard_normal((4, 8, 3, 2)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    (y,) = run_node("Conv", [x, w, b], pads=pads, dilations=dilations)
    expected = brute_conv(x, w, b, 1, [1, 1], dilations, pads[:2], pads[2:])
    assert taken == ["shifted"] and y.shape == expected.shape and y.flags.c_contiguous
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    # fewer than twice as many inputs, or strides: im2col
    taken.clear()
    run_node("Conv", [x[:, :7], w[:, :7]], pads=pads)
    run_node("Conv", [x, w], pads=pads, strides=[1, 2])
    assert taken == ["im2col", "im2col"]


@pytest.mark.parametrize("group, channels_out", [(4, 4), (1, 2), (1, 4)])
def test_conv_of_an_empty_batch_is_empty(group, channels_out):
    # depthwise, shifted-product and im2col paths with N = 0: an empty (0, M, H, W) result
    x = np.zeros((0, 4, 5, 6), dtype=np.float32)
    w = np.ones((channels_out, 4 // group, 3, 3), dtype=np.float32)
    (y,) = run_node("Conv", [x, w], group=group, pads=[1, 1, 1, 1])
    assert y.shape == (0, channels_out, 5, 6) and y.dtype == np.float32
