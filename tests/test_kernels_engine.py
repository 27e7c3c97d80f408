"""The kernels backend's engine: official node cases across operator families, control flow,
function bodies, constant folding, releasing intermediates, in-place reuse, and the errors it
raises on purpose."""

from __future__ import annotations

import warnings
import weakref

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from harness.backends.base import Rejected, Unsupported
from harness.backends.kernels import KernelsBackend, registry

from .util import check_scan_8_pads_a_shorter_batch_entry

# a few official node cases from every operator family the engine implements
NODE_CASES = [
    # elementwise math and activations
    "test_add_bcast", "test_div_uint8", "test_pow_types_int32_float32", "test_mod_mixed_sign_float32",
    "test_erf", "test_gelu_default_2", "test_gelu_tanh_2", "test_clip_default_inbounds", "test_selu",
    "test_softmax_axis_1", "test_logsoftmax_large_number", "test_hardmax_one_hot", "test_sum_two_inputs",
    "test_round", "test_isinf_negative", "test_prelu_broadcast", "test_swish",
    # logic and bitwise
    "test_equal_string", "test_greater_equal_bcast", "test_xor_bcast4v4d", "test_bitshift_right_uint16",
    "test_bitwise_not_3d", "test_where_long_example",
    # casts
    "test_cast_FLOAT_to_FLOAT8E4M3FN", "test_cast_no_saturate_FLOAT_to_FLOAT8E5M2", "test_cast_FLOAT_to_BFLOAT16",
    "test_cast_INT4_to_FLOAT", "test_cast_e8m0_FLOAT_to_FLOAT8E8M0", "test_castlike_FLOAT_to_FLOAT16",
    # reductions
    "test_reduce_sum_default_axes_keepdims_random", "test_reduce_log_sum_exp_negative_axes_keepdims_random",
    "test_reduce_max_empty_set", "test_reduce_mean_do_not_keepdims_random", "test_argmax_keepdims_random_select_last_index",
    # matrix
    "test_matmul_4d", "test_gemm_all_attributes", "test_matmulinteger", "test_einsum_batch_matmul",
    "test_det_nd", "test_cumsum_1d_reverse_exclusive", "test_tril_neg",
    # tensor and shape
    "test_reshape_negative_extended_dims", "test_slice_neg_steps", "test_split_variable_parts_2d_opset18",
    "test_reflect_pad", "test_constant_pad_negative_axes", "test_wrap_pad", "test_tile", "test_expand_dim_changed", "test_range_int32_type_negative_delta",
    "test_onehot_negative_indices", "test_compress_1", "test_nonzero_example", "test_top_k_smallest",
    "test_unique_sorted_with_axis", "test_shape_start_negative_1", "test_flatten_negative_axis1",
    # gather and scatter
    "test_gather_negative_indices", "test_gathernd_example_int32_batch_dim1", "test_scatter_elements_with_reduction_max",
    "test_scatternd_multiply", "test_tensorscatter_circular",
    # sequences, optionals, control flow, functions
    "test_sequence_insert_at_back", "test_split_to_sequence_nokeepdims", "test_optional_has_element_empty_optional_input",
    "test_loop11", "test_scan9_sum", "test_if_seq", "test_sequence_map_add_2_sequences",
    "test_sce_NCd1_mean_weight_negative_ii", "test_layer_normalization_4d_axis0_expanded",
    # quantization, strings, ml, training
    "test_quantizelinear_blocked_asymmetric", "test_dequantizelinear_int4", "test_dynamicquantizelinear",
    "test_qlinearmatmul_2D_uint8_float32", "test_string_split_basic", "test_strnormalizer_export_monday_casesensintive_upper",
    "test_regex_full_match_email_domain", "test_ai_onnx_ml_tree_ensemble_set_membership",
    "test_ai_onnx_ml_label_encoder_tensor_mapping", "test_adam_multiple",
]


def _value(v):
    if isinstance(v, onnx.TensorProto):
        return onnx.numpy_helper.to_array(v)
    if isinstance(v, list):
        return [_value(x) for x in v]
    return v


@pytest.fixture(scope="module")
def node_cases():
    from onnx.backend.test.case.node import collect_testcases

    wanted = set(NODE_CASES)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return {tc.name: tc for tc in collect_testcases(None) if tc.name in wanted}


@pytest.fixture(scope="module")
def backend():
    return KernelsBackend()


def assert_same(expected, actual, rtol=1e-3, atol=1e-7):
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected)
        for e, a in zip(expected, actual):
            assert_same(e, a, rtol, atol)
        return
    if expected is None:
        assert actual is None
        return
    expected = np.asarray(expected)
    assert isinstance(actual, np.ndarray)
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    if expected.dtype == object or expected.dtype.kind in "biu":
        assert actual.tolist() == expected.tolist()
    else:
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", NODE_CASES)
def test_official_node_case(name, node_cases, backend):
    tc = node_cases[name]
    session = backend.prepare(tc.model)
    names = [i.name for i in tc.model.graph.input]
    for inputs, outputs in tc.data_sets:
        got = session.run(dict(zip(names, [_value(v) for v in inputs])))
        assert len(got) == len(tc.model.graph.output)
        for expected, actual in zip(outputs, got):
            assert_same(_value(expected), actual, max(tc.rtol, 1e-3), max(tc.atol, 1e-7))


# -- hand-made models -------------------------------------------------------------------------

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, initializers=(), opset=21, **kw):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **kw)


def _vi(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def test_loop_and_if_read_outer_scope(backend):
    # Loop body: acc += x * i; If inside the body picks a branch reading outer-scope ``x``
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [], [_vi("t")])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [_vi("e")])
    body = helper.make_graph(
        [
            helper.make_node("Cast", ["i"], ["fi"], to=F),
            helper.make_node("Mod", ["i", "two"], ["parity"]),
            helper.make_node("Equal", ["parity", "zero"], ["even"]),
            helper.make_node("If", ["even"], ["signed"], then_branch=then_g, else_branch=else_g),
            helper.make_node("Mul", ["signed", "fi"], ["term"]),
            helper.make_node("Add", ["acc", "term"], ["acc_out"]),
            helper.make_node("Identity", ["cond"], ["cond_out"]),
        ],
        "body",
        [_vi("i", TensorProto.INT64, []), _vi("cond", TensorProto.BOOL, []), _vi("acc")],
        [_vi("cond_out", TensorProto.BOOL, []), _vi("acc_out"), ],
    )
    consts = [helper.make_tensor("two", TensorProto.INT64, [], [2]), helper.make_tensor("zero", TensorProto.INT64, [], [0])]
    model = _model(
        [helper.make_node("Loop", ["n", "", "acc0"], ["acc"], body=body)],
        [_vi("n", TensorProto.INT64, []), _vi("x", F, [3]), _vi("acc0", F, [3])],
        [_vi("acc", F, [3])],
        consts,
    )
    x = np.array([1.0, 2.0, -1.0], dtype=np.float32)
    (acc,) = backend.prepare(model).run({"n": np.array(5, dtype=np.int64), "x": x, "acc0": np.zeros(3, np.float32)})
    expected = sum((x if i % 2 == 0 else -x) * i for i in range(5))
    np.testing.assert_allclose(acc, expected)
    assert acc.dtype == np.float32


def test_constants_are_folded(backend):
    nodes = [
        helper.make_node("Constant", [], ["c"], value=helper.make_tensor("v", F, [2], [1.0, 2.0])),
        helper.make_node("Add", ["c", "w"], ["cw"]),
        helper.make_node("Exp", ["cw"], ["e"]),
        helper.make_node("Mul", ["x", "e"], ["y"]),
    ]
    w = onnx.numpy_helper.from_array(np.array([0.5, 0.25], dtype=np.float32), "w")
    model = _model(nodes, [_vi("x", F, [2])], [_vi("y", F, [2])], [w])
    session = backend.prepare(model)
    assert [step[5].split("(")[0] for step in session.plan.steps] == ["Mul"]
    x = np.array([3.0, 4.0], dtype=np.float32)
    np.testing.assert_allclose(session.run({"x": x})[0], x * np.exp(np.array([1.5, 2.25], dtype=np.float32)), rtol=1e-6)


def test_random_ops_are_not_folded(backend):
    model = _model(
        [helper.make_node("RandomUniform", [], ["r"], shape=[4], seed=1.0), helper.make_node("Add", ["x", "r"], ["y"])],
        [_vi("x", F, [4])],
        [_vi("y", F, [4])],
    )
    ops = [step[5].split("(")[0] for step in backend.prepare(model).plan.steps]
    assert "RandomUniform" in ops


def test_intermediates_are_released_after_last_use(backend):
    w = [onnx.numpy_helper.from_array(np.eye(8, dtype=np.float32) * (k + 1), f"w{k}") for k in range(3)]
    model = _model(
        [
            helper.make_node("MatMul", ["x", "w0"], ["h0"]),
            helper.make_node("MatMul", ["h0", "w1"], ["h1"]),
            helper.make_node("MatMul", ["h1", "w2"], ["y"]),
        ],
        [_vi("x", F, [2, 8])],
        [_vi("y", F, [2, 8])],
        w,
    )
    session = backend.prepare(model)
    plan = session.plan
    alive: dict[str, weakref.ref] = {}
    seen_dead: dict[str, bool] = {}

    def spy(step):
        fn, ins, outs, free, ip, label = step

        def run(*args):
            for name, ref in alive.items():
                seen_dead.setdefault(name, False)
                if ref() is None:
                    seen_dead[name] = True
            res = fn(*args)
            alive[label] = weakref.ref(res[0])
            return res

        return (run, ins, outs, free, ip, label)

    plan.steps = [spy(s) for s in plan.steps]
    x = np.ones((2, 8), dtype=np.float32)
    (y,) = session.run({"x": x})
    np.testing.assert_allclose(y, x * 6)
    first = plan.steps[0][5]
    assert seen_dead[first], "h0 was still referenced after its last consumer ran"


def test_in_place_only_on_dead_unaliased_intermediates(backend):
    model = _model(
        [
            helper.make_node("Relu", ["x"], ["r"]),  # x is a feed: must not be overwritten
            helper.make_node("MatMul", ["r", "w"], ["m"]),
            helper.make_node("Relu", ["m"], ["y"]),  # m dies here: may be reused
        ],
        [_vi("x", F, [2, 2])],
        [_vi("y", F, [2, 2])],
        [onnx.numpy_helper.from_array(-np.eye(2, dtype=np.float32), "w")],
    )
    session = backend.prepare(model)
    in_place = [bool(step[4]) for step in session.plan.steps]
    assert in_place == [False, False, True]
    calls = []
    last = session.plan.steps[-1]
    kernel = last[0]

    class Spy:  # the same kernel, recording which variant runs
        def __call__(self, *args):
            calls.append("copy")
            return kernel(*args)

        def inplace(self, *args):
            calls.append("inplace")
            return kernel.inplace(*args)

    session.plan.steps[-1] = (Spy(), *last[1:])
    x = np.array([[-1.0, 2.0], [3.0, -4.0]], dtype=np.float32)
    before = x.copy()
    (y,) = session.run({"x": x})
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(y, np.maximum(-np.maximum(before, 0), 0))
    assert calls == ["inplace"]


def test_in_place_never_writes_through_a_live_view(backend):
    # r is a view of m; m is read again after Relu(r): Relu must not reuse r's memory
    model = _model(
        [
            helper.make_node("MatMul", ["x", "w"], ["m"]),
            helper.make_node("Reshape", ["m", "shape"], ["r"]),
            helper.make_node("Neg", ["r"], ["n"]),
            helper.make_node("Reshape", ["n", "back"], ["nb"]),
            helper.make_node("Add", ["m", "nb"], ["y"]),
        ],
        [_vi("x", F, [2, 2])],
        [_vi("y", F, [2, 2])],
        [
            onnx.numpy_helper.from_array(np.eye(2, dtype=np.float32), "w"),
            onnx.numpy_helper.from_array(np.array([4], dtype=np.int64), "shape"),
            onnx.numpy_helper.from_array(np.array([2, 2], dtype=np.int64), "back"),
        ],
    )
    x = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    (y,) = backend.prepare(model).run({"x": x})
    np.testing.assert_array_equal(y, np.zeros((2, 2), np.float32))


def test_function_bodies_cover_missing_kernels(backend, monkeypatch):
    # without a Celu kernel the engine runs Celu's schema function body
    monkeypatch.delitem(registry.KERNELS, ("", "Celu"))
    model = _model([helper.make_node("Celu", ["x"], ["y"], alpha=2.0)], [_vi("x", F, [4])], [_vi("y", F, [4])], opset=13)
    x = np.array([-3.0, -0.5, 0.0, 2.0], dtype=np.float32)
    (y,) = backend.prepare(model).run({"x": x})
    np.testing.assert_allclose(y, np.maximum(x, 0) + np.minimum(0, 2.0 * np.expm1(x / 2.0)), rtol=1e-6)


def test_model_local_functions_are_inlined(backend):
    fn = helper.make_function(
        "local", "Square", ["a"], ["b"], [helper.make_node("Mul", ["a", "a"], ["b"])], [helper.make_opsetid("", 21)]
    )
    graph = helper.make_graph([helper.make_node("Square", ["x"], ["y"], domain="local")], "g", [_vi("x", F, [3])], [_vi("y", F, [3])])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("local", 1)], functions=[fn]
    )
    x = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    np.testing.assert_allclose(backend.prepare(model).run({"x": x})[0], x * x)


def test_missing_kernel_is_unsupported(backend, monkeypatch):
    monkeypatch.delitem(registry.KERNELS, ("", "Abs"))  # Abs has no function body
    model = _model([helper.make_node("Abs", ["x"], ["y"])], [_vi("x", F, [2])], [_vi("y", F, [2])])
    with pytest.raises(Unsupported, match="no kernel for Abs-13"):
        backend.prepare(model)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda m: m.graph.node[0].input.__setitem__(0, "nowhere"), "invalid model"),
        (lambda m: setattr(m.graph.node[0], "domain", "com.example"), "unknown opset domain"),
        (lambda m: setattr(m, "ir_version", onnx.IR_VERSION + 1), "IR version"),
        (lambda m: m.opset_import[0].__setattr__("version", 10_000), "newer than"),
    ],
)
def test_invalid_models_are_rejected(backend, mutate, message):
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", F, [2])], [_vi("y", F, [2])])
    mutate(model)
    with pytest.raises(Rejected, match=message):
        backend.prepare(model)


def test_outputs_keep_the_spec_dtype_and_are_arrays(backend):
    model = _model(
        [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0), helper.make_node("Cast", ["s"], ["h"], to=TensorProto.FLOAT16)],
        [_vi("x", F, [3])],
        [_vi("s", F, []), _vi("h", TensorProto.FLOAT16, [])],
    )
    s, h = backend.prepare(model).run({"x": np.array([1, 2, 3], dtype=np.float32)})
    assert isinstance(s, np.ndarray) and s.dtype == np.float32 and s.shape == ()
    assert h.dtype == np.float16 and float(h) == 6.0


def test_environment_records_the_blas_threads_it_reads_back():
    backend = KernelsBackend(threads=1)
    backend.load()  # limits this process's BLAS pool: put it back after
    try:
        assert backend.environment()["threads"] == 1
    finally:
        backend._limiter.restore_original_limits()


def test_scan_8_pads_a_shorter_batch_entry(backend):
    check_scan_8_pads_a_shorter_batch_entry(backend)


def test_dynamic_quantize_linear_lets_a_nan_through_the_range(backend):
    """maximum(0, max(x)) - minimum(0, min(x)) with a NaN in x is NaN (ReduceMax / ReduceMin propagate it),
    not the range of the other elements."""
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    model = _model([node], [_vi("x", F, [3])], [_vi("y", TensorProto.UINT8, [3]), _vi("s", F, []), _vi("z", TensorProto.UINT8, [])],
                   opset=11)
    y, s, z = backend.prepare(model).run({"x": np.array([np.nan, 1.0, -1.0], np.float32)})
    assert np.isnan(s) and y.shape == (3,)
    y, s, z = backend.prepare(model).run({"x": np.array([2.0, 1.0, -3.0], np.float32)})
    assert s == np.float32(5) / np.float32(255) and int(z) == 153


def test_qlinear_matmul_does_not_round_the_product_to_the_scales_type_first(backend):
    """float16 scales, float8e5m2fnuz output: 2.5 * 0.0625 * 3 * fl16(0.3) / 4 = 0.0351620 lies just above the
    midpoint 0.03515625 of the float 8 values 0.03125 and 0.0390625; rounding it to float16 first lands on the
    midpoint, which ties to even (0.03125). In float32 it stays above: 0.0390625."""
    f8, f16 = TensorProto.FLOAT8E5M2FNUZ, TensorProto.FLOAT16
    names = ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"]
    types = [f8, f16, f8, f8, f16, f8, f16, f8]
    shapes = [[1, 1], [], [], [1, 1], [], [], [], []]
    node = helper.make_node("QLinearMatMul", names, ["y"])
    model = _model([node], [_vi(n, t, s) for n, t, s in zip(names, types, shapes)], [_vi("y", f8, [1, 1])])
    e5 = ml_dtypes.float8_e5m2fnuz
    feeds = {"a": np.array([[2.5]], e5), "sa": np.array(0.0625, np.float16), "za": np.array(0, e5),
             "b": np.array([[3.0]], e5), "sb": np.array(0.3, np.float16), "zb": np.array(0, e5),
             "sy": np.array(4.0, np.float16), "zy": np.array(0, e5)}
    (y,) = backend.prepare(model).run(feeds)
    assert float(y[0, 0]) == 0.0390625


def test_cast_map_writes_the_shortest_float32_decimal():
    """CastMap TO_STRING: our choice of the spec-silent format (operator_cases' CastMap.to_string), a
    float as the fewest digits that read back as its float32, an integral one without '.0'."""
    node = helper.make_node("CastMap", ["x"], ["y"], domain="ai.onnx.ml", cast_to="TO_STRING")
    run = registry.lookup("ai.onnx.ml", "CastMap", 1)(registry.NodeInfo(node=node, attrs={"cast_to": "TO_STRING"}, opset=1,
                                                                         inputs=["x"], outputs=["y"]))
    values = {k: np.float32(v) for k, v in enumerate([660874.625, 1e-7, 0.0, -1.5, np.inf])}
    (y,) = run(values)
    assert y.tolist() == [["660874.6", "1e-07", "0", "-1.5", "inf"]]
    (y,) = run({2: "7", 1: "x"})
    assert y.tolist() == [["x", "7"]]


@pytest.mark.parametrize("target, largest", [(TensorProto.FLOAT6E2M3, 7.5), (TensorProto.FLOAT6E3M2, 28.0)])
def test_quantize_linear_28_sends_nan_to_the_largest_float6(backend, target, largest):
    """float6 has no NaN: like float4's Cast table, our reference sends it to the largest value
    (ml_dtypes' own conversion gives -0)."""
    zp = helper.make_tensor("zp", target, [], [0.0])
    model = _model([helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"])], [_vi("x", shape=[3])], [_vi("y", target, [3])],
                   [helper.make_tensor("s", F, [], [1.0]), zp], opset=28)
    y = backend.prepare(model).run({"x": np.array([np.nan, 1.0, -1.0], np.float32)})[0]
    assert [float(v) for v in y] == [largest, 1.0, -1.0]


def test_float_to_int_out_of_range_takes_the_x86_reading_on_every_platform(backend):
    # Cast.float_to_int_out_of_range, the x86-64 reading: through int32 (int64 for uint32 and the
    # 64-bit types), NaN / inf / out of that range -> its minimum, then the target's low bits
    x = np.array([np.nan, np.inf, -3.9, 3e9, 1e19], np.float32)
    expected = {TensorProto.UINT32: [0, 0, 2**32 - 3, 3_000_000_000, 0],
                TensorProto.INT8: [0, 0, -3, 0, 0],
                TensorProto.UINT64: [2**63, 2**63, 2**64 - 3, 3_000_000_000, 9999999980506447872]}
    for to, want in expected.items():
        node = helper.make_node("Cast", ["x"], ["y"], to=to)
        model = helper.make_model(helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
                                                    [helper.make_tensor_value_info("y", to, [5])]),
                                  opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
        assert backend.prepare(model).run({"x": x})[0].tolist() == want, to


_KEPT_SCRIPT = """
import re, sys
import numpy as np
from harness.backends.kernels import KernelsBackend


def rss():
    return int(re.search(r"VmRSS:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) // 1024


be = KernelsBackend(keep_memory=sys.argv[1])
be.load()
before = rss()
a = np.ones(16 << 20, dtype=np.float32)  # 64 MiB, written
del a
print(rss() - before, be.environment()["allocator"])
"""


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="glibc's malloc, /proc")
@pytest.mark.parametrize("keep", ["true", "false"])
def test_freed_memory_is_kept_for_the_next_run(keep):
    # a freed 64 MiB block stays with the process (the next run's activation reuses its pages
    # instead of faulting in and zeroing fresh ones); under malloc's defaults a block of
    # 32 MiB or more is a mmap of its own, handed back to the OS when freed
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", _KEPT_SCRIPT, keep], capture_output=True, text=True,
                         cwd=root, env={"PYTHONPATH": str(root), "PATH": ""}, check=True).stdout.split(maxsplit=1)
    kept_mib, allocator = int(out[0]), out[1]
    if keep == "true":
        assert kept_mib >= 60 and allocator.startswith("glibc malloc keeps freed blocks"), (kept_mib, allocator)
    else:
        assert kept_mib < 8 and "as it is" in allocator, (kept_mib, allocator)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1000,), (3, 5, 7), (2, 2 * 65536 + 17)])
def test_relu_gives_maximums_bits(dtype, shape):
    # ReLU (in place or not; block by block against zeros for a contiguous array, through a
    # mask for a strided one): the same bits as np.maximum(x, 0) everywhere, NaN's sign and
    # payload, -0.0 and -inf included, at the start, inside and across blocks of 65536
    from harness.backends.kernels.ops_elementwise import relu

    rng = np.random.default_rng(9)
    x = rng.standard_normal(shape).astype(dtype)
    specials = [np.nan, -np.nan, -0.0, 0.0, -np.inf, np.inf, 1e-45, -1e-45, np.frombuffer(
        np.array(0x7FC01234 if dtype == np.float32 else 0x7FF8000000001234,
                 dtype=np.uint32 if dtype == np.float32 else np.uint64).tobytes(), dtype=dtype)[0]]
    flat = x.reshape(-1)
    for at in (0, flat.size // 2, 65536 - 4, 2 * 65536 - 4):
        if at + len(specials) <= flat.size:
            flat[at : at + len(specials)] = specials
    bits = f"u{x.itemsize}"
    for view in (lambda a: a, lambda a: a[..., ::2], lambda a: np.swapaxes(a, 0, -1)):
        arg = view(x)
        expected = np.maximum(arg, dtype(0))
        (y,) = relu(None)(arg)
        np.testing.assert_array_equal(y.view(bits), expected.view(bits))
        mine = view(x.copy())  # as strided as arg, and ours to overwrite
        (y,) = relu(None).inplace(mine)
        assert y is mine
        np.testing.assert_array_equal(y.view(bits), expected.view(bits))
