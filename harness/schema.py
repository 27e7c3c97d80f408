"""A thin view over ``onnx.defs``: the op-versions, which schema is in force at an opset, the
types a schema allows, and the opset negotiation that re-stamps a model at the lowest IR
version and opset whose schemas are identical for every node."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import numpy as np
import onnx
import onnx.defs
from onnx import TensorProto, numpy_helper

RANDOM_OPS = frozenset({"Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike"})
DOMAINS = {"": "ai.onnx", "ai.onnx": "ai.onnx", "ai.onnx.ml": "ai.onnx.ml", "ai.onnx.preview.training": "ai.onnx.preview.training"}


def canonical_domain(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


@functools.lru_cache(maxsize=None)
def schema_at(op_type: str, opset: int, domain: str = "") -> onnx.defs.OpSchema | None:
    """The schema in force for ``op_type`` at ``opset`` of ``domain`` (None if undefined)."""
    try:
        return onnx.defs.get_schema(op_type, opset, canonical_domain(domain))
    except onnx.defs.SchemaError:
        return None


def since_versions(op_type: str, domain: str = "") -> tuple[int, ...]:
    """Every ``since_version`` of an operator, oldest first."""
    return _since_index().get((op_type, canonical_domain(domain)), ())


@functools.lru_cache(maxsize=1)
def _since_index() -> dict[tuple[str, str], tuple[int, ...]]:
    """(op, domain) -> its since_versions, oldest first: every schema read once."""
    index: dict[tuple[str, str], list[int]] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        index.setdefault((s.name, s.domain), []).append(s.since_version)
    return {key: tuple(sorted(versions)) for key, versions in index.items()}


def all_op_versions(domain: str = "") -> list[tuple[str, int]]:
    """(op, since_version) for every op-version of ``domain``, sorted."""
    domain = canonical_domain(domain)
    return sorted(
        (s.name, s.since_version)
        for s in onnx.defs.get_all_schemas_with_history()
        if s.domain == domain and not s.name.startswith("_")
    )


def newest_opset(domain: str = "") -> int:
    return onnx.defs.onnx_opset_version() if canonical_domain(domain) == "" else max(
        s.since_version for s in onnx.defs.get_all_schemas_with_history() if s.domain == domain
    )


def next_version(op_type: str, since: int, domain: str = "") -> int | None:
    """The since_version following ``since``, or None if ``since`` is the newest."""
    later = [v for v in since_versions(op_type, domain) if v > since]
    return later[0] if later else None


def opsets_in_force(op_type: str, since: int, domain: str = "") -> range:
    """The opsets at which op-version ``op_type-since`` is the one in force."""
    nxt = next_version(op_type, since, domain)
    return range(since, (nxt if nxt else newest_opset(domain) + 1))


def allowed_types(schema: onnx.defs.OpSchema) -> dict[str, list[str]]:
    """Type-constraint name -> allowed type strings, e.g. {"T": ["tensor(float)", ...]}."""
    return {tc.type_param_str: list(tc.allowed_type_strs) for tc in schema.type_constraints}


def coerce_attribute(sch: onnx.defs.OpSchema, name: str, value: Any) -> Any:
    """``value`` in the Python type the schema declares for attribute ``name``, as a node is
    built from it: 1 -> 1.0 for a float, a str -> bytes for a string (each of a list likewise),
    a numpy array -> a TensorProto for a tensor; anything else as it is."""
    kind = sch.attributes[name].type
    A = onnx.defs.OpSchema.AttrType
    if kind == A.FLOAT:
        return float(value)
    if kind == A.INT:
        return int(value)
    if kind == A.FLOATS:
        return [float(v) for v in value]
    if kind == A.INTS:
        return [int(v) for v in value]
    if kind == A.STRING:
        return value.encode() if isinstance(value, str) else value
    if kind == A.STRINGS:
        return [v.encode() if isinstance(v, str) else v for v in value]
    if kind == A.TENSOR and isinstance(value, np.ndarray):
        return numpy_helper.from_array(value)
    return value


# -- walking a model --------------------------------------------------------------------------
def iter_nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    """Every node of ``graph`` and of its subgraphs."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from iter_nodes(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from iter_nodes(g)


def opset_of(model: onnx.ModelProto, domain: str = "") -> int | None:
    for imp in model.opset_import:
        if canonical_domain(imp.domain) == canonical_domain(domain):
            return imp.version
    return None


#: ONNX's element-type names that differ from the project's one vocabulary (``float32``, not ``float``)
DTYPE_ALIASES = {"float": "float32", "double": "float64"}


def dtype_label(name: str) -> str:
    """A dtype name in the project's vocabulary (harness.strategies labels): ``float`` -> ``float32``."""
    return DTYPE_ALIASES.get(name, name)


def model_tags(model: onnx.ModelProto) -> dict[str, Any]:
    """Tags a case carries: its op (for a single-node model), op-version, opset, dtypes."""
    nodes = list(iter_nodes(model.graph))
    ops = sorted({n.op_type for n in nodes})
    tags: dict[str, Any] = {"ops": ops, "opset": opset_of(model, "") or opset_of(model, "ai.onnx.ml")}
    top = list(model.graph.node)
    if len(top) == 1:
        node = top[0]
        domain = canonical_domain(node.domain)
        opset = opset_of(model, domain)
        schema = schema_at(node.op_type, opset, domain) if opset else None
        tags.update(op=node.op_type, domain=DOMAINS.get(domain, domain), opset=opset)
        if schema is not None:
            tags["since_version"] = schema.since_version
    dtypes = []
    for info in model.graph.input:
        if info.type.HasField("tensor_type"):
            dtypes.append(dtype_label(onnx.helper.tensor_dtype_to_string(info.type.tensor_type.elem_type).replace("TensorProto.", "").lower()))
    tags["dtypes"] = sorted(set(dtypes))
    random_ops = [n.op_type for n in nodes if n.op_type in RANDOM_OPS or _is_training_dropout(n)]
    if random_ops:
        tags["random"] = random_ops[0]
    return tags


def _is_training_dropout(node: onnx.NodeProto) -> bool:
    return node.op_type == "Dropout" and len(node.input) >= 3 and node.input[2] != ""


# -- opset negotiation ------------------------------------------------------------------------
# The IR version that introduced a data type (onnx/IR.md, "Tensor element types").
_TYPE_IR = {
    TensorProto.BFLOAT16: 4,
    TensorProto.FLOAT8E4M3FN: 9,
    TensorProto.FLOAT8E4M3FNUZ: 9,
    TensorProto.FLOAT8E5M2: 9,
    TensorProto.FLOAT8E5M2FNUZ: 9,
    TensorProto.UINT4: 10,
    TensorProto.INT4: 10,
    TensorProto.FLOAT4E2M1: 11,
}
for _name, _ir in (("FLOAT8E8M0", 12), ("UINT2", 12), ("INT2", 12)):
    if hasattr(TensorProto, _name):
        _TYPE_IR[getattr(TensorProto, _name)] = _ir


@functools.lru_cache(maxsize=None)
def ir_for_opset(opset: int) -> int:
    """The lowest IR version released together with ai.onnx ``opset``."""
    candidates = [ir for _, ir, ai_onnx, *_ in onnx.helper.VERSION_TABLE if ai_onnx == opset]
    if candidates:
        return min(candidates)
    later = [(ai_onnx, ir) for _, ir, ai_onnx, *_ in onnx.helper.VERSION_TABLE if ai_onnx > opset]
    return min(later)[1] if later else onnx.IR_VERSION


def _elem_types(model: onnx.ModelProto) -> set[int]:
    types: set[int] = set()

    def from_type(tp: onnx.TypeProto) -> None:
        kind = tp.WhichOneof("value")
        if kind == "tensor_type":
            types.add(tp.tensor_type.elem_type)
        elif kind == "sequence_type":
            from_type(tp.sequence_type.elem_type)
        elif kind == "optional_type":
            from_type(tp.optional_type.elem_type)

    def walk(graph: onnx.GraphProto) -> None:
        for info in (*graph.input, *graph.output, *graph.value_info):
            from_type(info.type)
        types.update(t.data_type for t in graph.initializer)
        for node in graph.node:
            for attr in node.attribute:
                if attr.name in ("to", "dtype", "output_dtype", "stash_type") and attr.type == onnx.AttributeProto.INT:
                    types.add(attr.i)
                elif attr.type == onnx.AttributeProto.TENSOR:
                    types.add(attr.t.data_type)
                elif attr.type == onnx.AttributeProto.GRAPH:
                    walk(attr.g)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    for g in attr.graphs:
                        walk(g)

    walk(model.graph)
    return types


def ir_for_types(model: onnx.ModelProto) -> int:
    """The lowest IR version that has every element type the model uses."""
    return max([3, *(_TYPE_IR.get(t, 3) for t in _elem_types(model))])


def negotiate(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, list[int]]]:
    """Re-stamp ``model`` at the lowest opset (per standard domain) and IR version at which
    every node keeps the schema it has now. Returns the new model and what changed
    (``{"opset": [old, new], "ir_version": [old, new]}``); the model is unchanged when nothing can
    be lowered or a node's schema is unknown."""
    changes: dict[str, list[int]] = {}
    nodes = list(iter_nodes(model.graph))
    for func in model.functions:
        nodes.extend(func.node)
    local = {(f.domain, f.name) for f in model.functions}
    new_versions: dict[str, int] = {}
    standard = {"", "ai.onnx.ml"}
    if any(canonical_domain(n.domain) not in standard and (n.domain, n.op_type) not in local for n in nodes):
        return model, {}  # ops of other domains may expand to standard ops: their opset stays
    for imp in model.opset_import:
        domain = canonical_domain(imp.domain)
        if domain not in standard or not any(canonical_domain(n.domain) == domain for n in nodes):
            continue
        lowest = 1
        for node in nodes:
            if canonical_domain(node.domain) != domain or (node.domain, node.op_type) in local:
                continue
            schema = schema_at(node.op_type, imp.version, domain)
            if schema is None:
                return model, {}
            lowest = max(lowest, schema.since_version)
        if lowest < imp.version:
            new_versions[domain] = lowest
    if not new_versions and model.ir_version <= ir_for_opset(opset_of(model, "") or 1):
        return model, {}
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for imp in out.opset_import:
        domain = canonical_domain(imp.domain)
        if domain in new_versions:
            key = "opset" if domain == "" else f"opset:{domain}"
            changes[key] = [imp.version, new_versions[domain]]
            imp.version = new_versions[domain]
    ir = ir_for_opset(opset_of(out, "") or 1)
    inits = {t.name for t in out.graph.initializer}
    if inits - {i.name for i in out.graph.input}:
        ir = max(ir, 4)  # before IR 4 every initializer had to be a graph input
    if out.functions:
        ir = max(ir, 10 if any(f.overload for f in out.functions) else 8)
    ir = max(ir, ir_for_types(out))
    ir = min(ir, model.ir_version)
    if ir != model.ir_version:
        changes["ir_version"] = [model.ir_version, ir]
        out.ir_version = ir
    return (out, changes) if changes else (model, {})


def stamp_at(model: onnx.ModelProto, opset: int) -> tuple[onnx.ModelProto | None, str]:
    """``model`` stamped at ai.onnx ``opset`` when every node keeps its schema there;
    otherwise (None, why not)."""
    current = opset_of(model, "")
    if current is None:
        return None, "the model imports no ai.onnx opset"
    if current == opset:
        return model, ""
    for node in iter_nodes(model.graph):
        if canonical_domain(node.domain) != "":
            continue
        now, then = schema_at(node.op_type, current, ""), schema_at(node.op_type, opset, "")
        if now is None or then is None or now.since_version != then.since_version:
            version = f"{node.op_type}-{now.since_version}" if now else node.op_type
            return None, f"{version} is not the op-version in force at opset {opset}"
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for imp in out.opset_import:
        if canonical_domain(imp.domain) == "":
            imp.version = opset
    out.ir_version = max(model.ir_version, ir_for_opset(opset)) if opset > current else model.ir_version
    return out, ""
