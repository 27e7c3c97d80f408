"""Every spec-silent point names the readings it accepts, each computed (issue 31): on the cases
of the default draw that reach it, each reading gives arrays shaped and typed like our expected
outputs, and wherever ONNX Runtime or onnx.reference differs from our expected value at an open
element, one of the readings gives that value. A reading that no real backend takes must name
its source (``SOURCED``)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.registry import SPEC_SILENT, load_all

from .readings_check import backends, cases_reaching, check_of, judged, look, model_of, readings_at, run_on

load_all()

#: the modules another engineer gives readings (issue 31's classifier, Resize and activation points; the
#: points _ml_util declares for the regressors too)
ELSEWHERE = {"mel_weight_matrix", "ml_tree_ensemble_classifier", "ml_svm_classifier", "ml_linear_classifier",
             "ml_normalizer", "_ml_util", "resize", "upsample", "_resize_util", "gelu", "mish", "hard_swish", "swish"}

#: points whose open elements no reading can compute (an arbitrary fill, a value the spec leaves
#: to the implementation): they keep invariants only and count as unchecked
UNCHECKED: dict[str, str] = {
    "TopK.unsorted": "sorted=0: 'order of returned Values and Indices are undefined'; any order of the sorted=1 pairs is right",
    "ImageDecoder.jpeg_pixels": "ITU-T T.81 bounds the inverse DCT's error (IEEE 1180) instead of naming one computation",
    "Scan.padding": "'The remaining values have an undefined value': any fill is right",
    "StringNormalizer.empty_input": "the other choice (an empty output) has another shape, which no reading of open elements expresses",
}

#: a reading (by its name, for every point) -> where it comes from, when neither runtime takes it on the draw
STANDARD = {
    "NaN ignored (IEEE 754-2019 maximumNumber / minimumNumber: the NaNs left out)": "IEEE 754-2019, 9.6",
    "wraps (two's complement)": "two's complement arithmetic modulo 2**bits (C's unsigned arithmetic, numpy)",
    "saturates to the type's range": "saturating arithmetic (as Cast-19 saturates float 8 targets)",
}

#: (point, reading) -> where that reading comes from, when neither runtime takes it on the draw
SOURCED: dict[tuple[str, str], str] = {
    # taken by the kernel engine (which this test does not run) and by PyTorch's float32 stash; ONNX Runtime and
    # onnx.reference keep a float64 X wide
    ("RMSNormalization.stash_cast", "X cast to float32 first (Cast: +-inf out of range), as the kernel engine and PyTorch do"):
        "the spec's own text: 'if `stash_type` is 1, this operator casts all input variables to 32-bit float'",
    ("LayerNormalization.stash_cast", "X cast to float32 first (Cast: +-inf out of range), as PyTorch does"):
        "the spec's own text: 'if `stash_type` is 1, this operator casts all input variables to 32-bit float'",
    # CastLike's out-of-range casts reach ONNX Runtime and onnx.reference only from float8e8m0, which both refuse;
    # the same readings are taken by ONNX Runtime for Cast (Cast.float_to_int_out_of_range)
    ("CastLike.float_to_int_out_of_range", "the C conversion on x86-64: truncation toward zero through a 32-bit integer "
     "(64-bit for uint32 and the 64-bit types); a value outside that integer's range, +-inf or NaN gives its minimum (the "
     "'integer indefinite'); the target keeps the low bits"):
        "Intel 64 SDM, CVTTSS2SI/CVTTSD2SI: a NaN or out-of-range source gives the integer indefinite value (the minimum)",
    ("CastLike.float_to_int_out_of_range", "modular: truncation toward zero, then the low bits of the exact integer (two's "
     "complement wrap); NaN and +-inf give 0"):
        "ECMAScript ToInt32 / ToUint32: NaN and +-inf give 0, other numbers are truncated and taken modulo 2**32",
    ("Attention.nonfinite", "a -inf bias replaces the score (masked_fill) instead of being added: a NaN or +inf score of "
                            "a masked key takes no part"):
        "Flax's dot_product_attention_weights: masked logits are replaced (jnp.where(mask, weights, big_neg)), not added to",
    ("Attention.mask_type", "the mask read as a boolean one (nonzero: the key takes part)"):
        "the attn_mask text names a boolean mask or a float mask of the query's type, nothing else",
    ("Clip.nan", "the NaN taken as -inf (max(x, min) first lets the bound win)"):
        "x86 SSE maxps/minps return the second operand when one is NaN: max(min, x) then min(., max) gives a bound",
    ("Clip.nan", "the NaN taken as +inf (min(x, max) last lets the upper bound win)"):
        "x86 SSE maxps/minps return the second operand when one is NaN: the order of the two steps picks the bound",
    ("QuantizeLinear.fnuz_inf", "NaN (the saturating table of Cast-19/21/23)"):
        "Cast-19/21/23's saturating table (+-inf to NaN in the FNUZ types), which QuantizeLinear's saturate refers to",
    ("GRU.padding", "Y_h (Y_c) of a length-0 entry is 0 (ONNX Runtime)"): "ONNX Runtime's RNN and LSTM (its GRU is not run here)",
    **{("GRU.scaled_tanh_defaults", f"defaults {{'ScaledTanh': {ab}}}"): "ONNX Runtime's RNN and LSTM (its GRU is not run here)"
       for ab in ((0.0, 0.0), (0.0, 1.0), (1.0, 0.0))},
    ("LSTM.clip_cell", "clip_cell h"): "h(clip(Ct)): 'applied to the input of activations' read for h too",
    ("LSTM.clip_cell", "clip_cell state"): "cuDNN's cell clip: the cell state itself clipped",
    ("QLinearConv.padding_value", "padding cells hold 0"): "Conv's padding with zeros ('the number of pixels added'), taken as the quantized value 0",
    **{("QLinearMatMul.requantize_precision", name): "a requantization a runtime may use (neither runtime runs the drawn "
       "float 8 cases; the integer ones give ours)" for name in ("a float32 multiplier (a_scale * b_scale / y_scale)",
                                                                "float32 steps, left to right", "a multiplier in the scales' type")},
    ("ConvInteger.padding_value", "padding cells hold the integer 0"): "Conv's padding with zeros ('the number of pixels added')",
    **{(f"{op}.duplicate_indices", "the first update aimed at an element wins"):
       "the spec's loop run in the other order; a parallel scatter may keep any (PyTorch documents duplicates as nondeterministic)"
       for op in ("Scatter", "ScatterElements", "ScatterND")},
    ("Imputer.nan_match", "NaN equals nothing (IEEE comparison): not imputed"): "IEEE 754 compareQuietEqual: NaN equals no value",
    **{(f"{op}.mean_with_ignored", name): source for op in ("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss")
       for name, source in (("the sum over all the weights (ignored samples weigh theirs)",
                             "the attribute's 'sum of applied weights' with an ignored sample's class weight applied"),
                            ("the sum over the element count", "TensorFlow's SUM_OVER_BATCH_SIZE reduction"))},
    **{("ImageDecoder.grayscale_of_color", name): "the decoder libraries the point names" for name in (
        "OpenCV's cvtColor RGB2GRAY: (4899 R + 9617 G + 1868 B + 2^13) >> 14",
        "Pillow's convert('L'): (19595 R + 38470 G + 7471 B + 2^15) >> 16")},
    **{(f"{op}.nan_inf_row", "the mathematical limit (+inf entries share the mass, a row of -inf is uniform)"):
       "the limit of the formula as the entries grow to +inf (or all fall together to -inf)" for op in ("Softmax", "LogSoftmax")},
    ("GridSample.nearest_tie", "the tie rounded half away from zero (C's round())"):
        "C's round(), the function an implementation of GridSample-16's unqualified 'nearest' may call",
    ("Pow.int_negative_exponent", "the real result rounded toward -inf ((-2)^-1 = -1)"):
        "floor division's rounding (Python's 1 // -2), the other way an integer quotient is rounded",
    ("Pow.int_zero_negative_exponent", "+inf converted saturating (ARM, Rust's as): the type's maximum"):
        "ARM's FCVTZS and Rust's float-to-int `as` saturate +inf to the type's maximum",
    ("LpNormalization.narrow_accumulation", "the norm accumulated in the input type, left to right (+inf: x / inf = 0)"):
        "the norm computed as ReduceL2-18's function body does (Mul, ReduceSum, Sqrt in the input type)",
    ("ReduceLogSumExp.narrow_accumulation", "accumulated in the input type, left to right (the text's log(sum(exp(x))) "
                                            "without the maximum taken out: exp overflows)"):
        "the name's formula log(sum(exp(x))) evaluated literally in the input type (version 18's body casts to double first)",
}

#: points whose readings do not yet give every value a runtime returns: the runtime's choice is
#: named, and the comparator calls those elements a mismatch until it is computed
INCOMPLETE: dict[str, str] = {
    "GridSample.cubic_padding": "onnx.reference's cubic of integer and volumetric inputs differs beyond the two paddings "
                                "(it gives 0 where both readings give another value); not explained yet",
}

#: (point, backend) -> why that backend's values there are no reading (a bug the crosscheck decides): not asked to match
NOT_A_READING = {
    ("RNN.padding", "reference"): "onnx.reference processes every step whatever sequence_lens says",
    ("LSTM.padding", "reference"): "onnx.reference processes every step whatever sequence_lens says",
    ("LSTM.clip_cell", "reference"): "onnx.reference's LSTM applies no clip at all",
    ("LayerNormalization.stash_cast", "reference"): "onnx.reference returns a float64 X's Mean in float64, not U (its wrong-dtype entry)",
}

#: (op, backend) -> why the backend is not run in this process (it aborts the interpreter on some case)
NOT_RUN = {("GRU", "onnxruntime"): "ONNX Runtime's GRU aborts the process ('terminate called without an active exception') "
                                   "on a drawn case; the harness runs it in a worker and records the crash"}

#: points not given readings yet (issue 31 asks for every one; this list only shrinks)
PENDING = {
    "Binarizer.nan",
    "CastMap.sparse_gap",
    "DFT.nonfinite",
    "FeatureVectorizer.dims",
    "GridSample.bool_cast",
    "GridSample.int_cast",
    "GridSample.nonfinite_grid",
    "GridSample.zero_weight_nonfinite",
    "NonMaxSuppression.score_ties",
    "OneHotEncoder.nan",
    "STFT.nonfinite",
    "Unique.nan",
}

#: points whose readings only drawn cases show: more draws than one per dtype
DRAWS = {"QLinearMatMul.requantize_precision": 20, "QLinearConv.requantize_precision": 20, "QLinearConv.tie_rounding": 20, "QuantizeLinear.division_precision": 20, "GridSample.reflected_tie": 2, "Cast.nan_to_float4e2m1": 3, "CastLike.nan_to_float4e2m1": 3, "CastLike.float_to_int_out_of_range": 20, "DequantizeLinear.multiplication_precision": 20}

MINE = sorted(p.id for p in SPEC_SILENT.values()
              if p.module.rsplit(".", 1)[-1] not in ELSEWHERE and p.where.__module__.rsplit(".", 1)[-1] not in ELSEWHERE)
WITH_READINGS = [p for p in MINE if SPEC_SILENT[p].readings]


def test_every_point_names_its_readings_or_says_why_none_can_be_computed():
    assert [p for p in MINE if not SPEC_SILENT[p].readings and p not in UNCHECKED and p not in PENDING] == []
    assert [p for p in PENDING if SPEC_SILENT[p].readings] == []
    assert [p for p in UNCHECKED if SPEC_SILENT[p].readings] == []


@pytest.fixture(scope="module")
def runtimes():
    return backends()


@pytest.mark.parametrize("point_id", WITH_READINGS)
def test_readings_are_shaped_like_the_outputs_and_explain_what_the_runtimes_return(point_id, runtimes):
    point = SPEC_SILENT[point_id]
    cases = cases_reaching(point, n=DRAWS.get(point_id, 1))
    assert cases, f"no case of the draw reaches {point_id}"
    taken = {name: 0 for name in point.readings}
    unexplained = []
    for case in cases:
        check = check_of(point, case, case.data[0].expected)
        for name, outputs in readings_at(point, check).items():
            assert len(outputs) <= len(check.expected), (case.id, name)
            for k, value in enumerate(outputs):
                if value is not None:
                    e = np.asarray(check.expected[k])
                    assert (np.shape(value), np.asarray(value).dtype) == (e.shape, e.dtype), (case.id, name, k)
        for backend_name, backend in runtimes.items():
            if (point.op, backend_name) in NOT_RUN:
                continue
            model = model_of(case)  # outside the try: a harness error surfaces
            try:
                actual = run_on(backend, case, model)
            except Exception:  # noqa: BLE001 - the runtime refused the case: it says nothing of the readings
                continue
            seen = look(case, backend_name, actual, point_id)
            for name in taken:
                taken[name] += seen.by_reading.get(f"{point_id}: {name}", 0)
            verdict = judged(case, actual)  # the harness's comparator agrees
            if (point_id, backend_name) in NOT_A_READING:
                continue
            if "matched none of its readings" in (verdict.message or "") and point_id not in INCOMPLETE and not seen.broken:
                unexplained.append(f"{backend_name} {case.id}: the comparator says {verdict.message}")
            if seen.unexplained and not seen.broken:  # a broken invariant is a mismatch already
                unexplained.append(f"{backend_name} {case.id}: {seen.unexplained} of {seen.differing} open elements, {seen.example}")
    assert (unexplained == []) != (point_id in INCOMPLETE), "\n".join(unexplained[:10]) or f"{point_id} is complete now"
    assert [n for n, k in taken.items() if not k and (point_id, n) not in SOURCED and n not in STANDARD] == [], "readings no runtime takes and no source names"
