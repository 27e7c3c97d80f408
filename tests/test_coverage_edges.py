"""`onnx-harness coverage --edges`: which edge classes each op-version's examples reach, and the
gaps (classes that apply to an op-version by its schema but that no edge example reaches)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from harness import cli
from harness.coverage import edge_classes_applying, edge_classes_reached, edge_coverage
from harness.registry import Example

#: op-version -> edge classes it does not reach yet (shrinks as gaps close; a closed gap left here fails too)
KNOWN_GAPS: dict[str, set[str]] = {}


def reached(op, since, *examples, attrs=False):
    """The edge classes reached (with ``attrs``, only the attributes varied, as ``attr:NAME``)."""
    got = edge_classes_reached(op, onnx.defs.get_schema(op, since), list(examples))
    return {c for c in got if c.startswith("attr:") == attrs}


def test_float_specials_are_seen_one_by_one():
    f = np.float32
    assert reached("Abs", 13, ("float32", Example([np.array([1.0, 2.0], f)]))) == set()
    assert reached("Abs", 13, ("float32", Example([np.array([np.nan], f)]))) == {"nan"}
    assert reached("Abs", 13, ("float32", Example([np.array([-np.inf], f)]))) == {"inf"}
    assert reached("Abs", 13, ("float32", Example([np.array([-0.0], f)]))) == {"neg_zero"}
    assert reached("Abs", 13, ("float32", Example([np.array([0.0], f)]))) == set()  # +0 is not -0
    assert reached("Abs", 13, ("float16", Example([np.array([2.0**-20], np.float16)]))) == {"subnormal"}
    assert reached("Abs", 13, ("float32", Example([np.array([2.0**-20], f)]))) == set()  # normal in float32


def test_empty_overflow_integer_and_ties():
    assert reached("Abs", 13, ("float32", Example([np.zeros((2, 0), np.float32)]))) == {"empty"}
    assert reached("Abs", 13, ("float32", Example([np.zeros((), np.float32)]))) == set()  # rank 0 is not empty
    assert reached("Add", 14, ("int8", Example([np.array([127, 3], np.int8), np.array([1, 2], np.int8)]))) == {"integer", "overflow"}
    assert reached("Max", 13, ("float32", Example([np.array([1, 2], np.float32), np.array([3, 2], np.float32)]))) == {"ties"}
    assert reached("Max", 13, ("float32", Example([np.array([1, 2], np.float32), np.array([3, 4], np.float32)]))) == set()
    assert reached("ArgMax", 13, ("float32", Example([np.array([np.nan, np.nan, 1.0], np.float32)]))) == {"nan"}  # NaNs are no tie
    assert reached("Round", 11, ("float32", Example([np.array([2.5], np.float32)]))) == {"ties"}
    assert reached("Round", 11, ("float32", Example([np.array([2.4], np.float32)]))) == set()
    assert reached("Not", 1, ("bool", Example([np.array([True, False])]))) == {"bool"}


def test_non_default_attributes():
    x = [np.array([1.0], np.float32)]
    assert reached("LeakyRelu", 16, ("float32", Example(x, {"alpha": 0.01}))) == set()  # the default (float32 0.01)
    assert reached("LeakyRelu", 16, ("float32", Example(x, {"alpha": 0.5}))) == {"non_default_attrs"}
    assert reached("ArgMax", 13, ("float32", Example(x, {"keepdims": 1, "select_last_index": 0}))) == set()
    assert reached("ArgMax", 13, ("float32", Example(x, {"select_last_index": 1}))) == {"non_default_attrs"}
    assert reached("ArgMax", 13, ("float32", Example(x, {"select_last_index": 1, "keepdims": 1, "axis": -1})), attrs=True) == {
        "attr:select_last_index", "attr:axis"}
    assert reached("Abs", 1, ("float32", Example(x, {"consumed_inputs": [1]}))) == set()  # legacy, no effect on values


def test_classes_follow_the_schema():
    assert edge_classes_applying("Abs", onnx.defs.get_schema("Abs", 13), ["float32"], ["float32", "int8"]) == [
        "nan", "inf", "neg_zero", "subnormal", "empty", "overflow", "integer"]
    assert edge_classes_applying("Not", onnx.defs.get_schema("Not", 1), ["bool"], ["bool"]) == ["empty", "bool"]
    assert edge_classes_applying("ArgMax", onnx.defs.get_schema("ArgMax", 13), ["int32"], ["int32"]) == [
        "empty", "ties", "non_default_attrs", "integer"]


@pytest.fixture(scope="module")
def rows():
    return edge_coverage()


def test_every_covered_op_version_reaches_every_class_that_applies(rows):
    gaps = {r.key: set(r.gaps) for r in rows if r.gaps}
    new = {k: v - KNOWN_GAPS.get(k, set()) for k, v in gaps.items() if v - KNOWN_GAPS.get(k, set())}
    closed = {k: v - gaps.get(k, set()) for k, v in KNOWN_GAPS.items() if v - gaps.get(k, set())}
    assert not new, f"edge classes no example reaches: {new}"
    assert not closed, f"gaps closed, remove them from KNOWN_GAPS: {closed}"


def test_the_classic_edges_are_reached_where_they_apply(rows):
    by_key = {r.key: r for r in rows}
    assert {"nan", "inf", "neg_zero", "subnormal", "empty"} <= set(by_key["Abs-13"].reached)
    assert {"ties", "non_default_attrs", "integer"} <= set(by_key["ArgMax-13"].reached)


def test_cli_lists_the_edge_classes(capsys):
    assert cli.main(["coverage", "--edges", "--family", "bitwise"]) == 0
    out = capsys.readouterr().out
    assert "| BitShift-11" in out and "neg_zero" in out
    assert "covered op-versions reach every class that applies to them" in out


def test_attributes_never_varied_are_listed(rows):
    by_key = {r.key: r for r in rows}
    assert by_key["ArgMax-13"].fixed_attrs == []  # axis, keepdims and select_last_index all varied
    assert "consumed_inputs" not in by_key["Abs-1"].fixed_attrs  # legacy


def test_broadcast_index_and_exponent_classes():
    f, i64 = np.float32, np.int64
    one = np.arange(6, dtype=f).reshape(2, 3)
    assert reached("Add", 14, ("float32", Example([one, np.array([[-1, -2, -3]], f)]))) == {"broadcast"}
    assert reached("Add", 14, ("float32", Example([one, np.array(-1, f)]))) == {"broadcast"}  # a missing dim
    assert "broadcast" not in reached("Add", 14, ("float32", Example([one, one])))
    assert "broadcast" in reached("Expand", 13, ("float32", Example([np.ones((3, 1), f), np.array([3, 4], i64)])))
    assert "broadcast" not in reached("Expand", 13, ("float32", Example([np.ones((3, 4), f), np.array([3, 4], i64)])))
    data = np.arange(6, dtype=f).reshape(2, 3)
    assert "index" in reached("Gather", 13, ("float32", Example([data, np.array([-1, 0], i64)])))
    assert "index" not in reached("Gather", 13, ("float32", Example([data, np.array([1, 0], i64)])))
    ends = [np.array([0], i64), np.array([10], i64)]  # an end beyond the dim: clamped by the spec
    assert "index" in reached("Slice", 13, ("float32", Example([data, *ends])))
    assert "index" not in reached("Slice", 13, ("float32", Example([data, np.array([0], i64), np.array([2], i64)])))
    assert "index" in reached("Slice", 1, ("float32", Example([data], {"starts": [-2], "ends": [3]})))
    two = np.full(3, 2.0, f)
    assert "exponent" in reached("Pow", 15, ("float32", Example([two, np.array([1.0, -2.0, 0.5], f)])))
    assert "exponent" not in reached("Pow", 15, ("float32", Example([two, np.array([1.0, -0.5, 0.5], f)])))  # not integral


def test_the_new_classes_apply_where_the_spec_says_so():
    def applies(op, since, dtypes):
        return edge_classes_applying(op, onnx.defs.get_schema(op, since), dtypes, dtypes)

    assert "broadcast" in applies("Add", 14, ["float32"]) and "broadcast" in applies("Add", 1, ["float32"])  # legacy attribute
    assert "broadcast" in applies("PRelu", 16, ["float32"]) and "broadcast" in applies("Expand", 13, ["float32"])
    assert "broadcast" not in applies("Abs", 13, ["float32"]) and "broadcast" not in applies("Concat", 13, ["float32"])
    assert "index" in applies("Gather", 13, ["float32"]) and "index" in applies("Slice", 13, ["float32"])
    assert "index" not in applies("Gather", 1, ["float32"])  # "within bounds": no negative index before Gather-11
    assert "exponent" in applies("Pow", 15, ["float32"]) and "exponent" not in applies("Pow", 15, ["int32"])


def test_normalization_and_cast_attributes_are_all_varied_by_named_edges(rows):
    """BatchNormalization's momentum (ignored in inference, 0 and 1 in training), every axis and
    stash_type of LayerNormalization, Cast's round_mode: each set by an explicit edge example."""
    by_key = {r.key: r for r in rows}
    for key in ("BatchNormalization-1", "BatchNormalization-7", "BatchNormalization-9", "BatchNormalization-15",
                "LayerNormalization-17", "Cast-24", "Cast-28", "CastLike-25"):
        assert by_key[key].fixed_attrs == [], key
    from harness.registry import load_all

    reg = load_all()
    names = {ex.name: ex for ex in reg[("", "LayerNormalization", 17)].edges("float32", 17)}
    assert {ex.attrs.get("axis", -1) for ex in names.values() if ex.inputs[0].ndim == 3} == {-3, -2, -1, 0, 1, 2}
    assert names["stash_bfloat16"].attrs["stash_type"] == 16
    train = {ex.attrs["momentum"] for ex in reg[("", "BatchNormalization", 15)].edges("float32", 15)
             if ex.attrs.get("training_mode") and "momentum" in ex.attrs}
    assert {0.0, 0.5, 1.0} <= train


def test_float_value_classes_need_an_input_that_can_hold_one():
    def applies(op, since, dtypes):
        return edge_classes_applying(op, onnx.defs.get_schema(op, since), dtypes, dtypes)

    assert not {"nan", "inf", "neg_zero", "subnormal"} & set(applies("RandomNormal", 22, ["float32"]))  # no input at all
    assert {"neg_zero", "subnormal"} <= set(applies("Bernoulli", 15, ["float32"]))
    assert not {"nan", "inf"} & set(applies("Bernoulli", 15, ["float32"]))  # probabilities are in [0, 1]
    assert "inf" in applies("Multinomial", 7, ["float32"]) and "nan" not in applies("Multinomial", 7, ["float32"])


def test_values_carried_in_subgraphs_reach_the_classes():
    """An If's branch initializers and Constant values (nested subgraphs too) flow through it."""
    from operator_cases._control_util import graph, init, node, vi

    def branch(name, arr, constant=False):
        if constant:
            return graph(name, [node("Constant", [], [f"{name}_y"], value=init(f"{name}_v", arr))], [], [vi(f"{name}_y", "float32", arr.shape)])
        return graph(name, [node("Identity", [f"{name}_c"], [f"{name}_y"])], [], [vi(f"{name}_y", "float32", arr.shape)],
                     [init(f"{name}_c", arr)])

    f = np.float32
    plain = branch("p", np.array([1.0, 2.0], f))
    cond = np.array(True)
    assert reached("If", 16, ("float32", Example([cond], {"then_branch": plain, "else_branch": plain}))) == set()
    assert reached("If", 16, ("float32", Example([cond], {"then_branch": branch("t", np.array([np.nan], f)),
                                                          "else_branch": plain}))) == {"nan"}
    assert reached("If", 16, ("float32", Example([cond], {"then_branch": plain,
                                                          "else_branch": branch("e", np.array([-0.0], f), constant=True)}))) == {"neg_zero"}
    inner = graph("n", [node("If", ["x0"], ["n_y"], then_branch=branch("nt", np.zeros((2, 0), f)), else_branch=branch("ne", np.array([np.inf], f)))],
                  [], [vi("n_y", "float32", None)])
    assert reached("If", 16, ("float32", Example([cond], {"then_branch": inner, "else_branch": plain}))) == {"empty", "inf"}
