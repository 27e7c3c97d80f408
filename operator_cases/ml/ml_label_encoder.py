"""LabelEncoder (ai.onnx.ml): an elementwise table lookup (ONNX spec: LabelEncoder-1, 2, 4).

-1: strings to integers (the index of the string in classes_strings, the first one found;
default_int64, -1 by default) or integers to strings (classes_strings[i], "simple indexing";
default_string for an index outside the list).
-2: keys_* -> values_* (strings, int64s, floats); a missing key gives the default_* of the values'
type (-1, -0.0 or "_Unused"). "For key look-up, bit-wise comparison is used so even a float NaN can
be mapped": a key matches an input of the same bits (so -0.0 is not 0.0, a NaN key matches a NaN
of the same bits).
-4: adds int16/int32/double and keys_tensor / values_tensor / default_tensor. "Float keys with value
'NaN' match any input 'NaN' value regardless of bit value. If a key is repeated, the last key takes
precedence." The bit-wise sentence is gone: -0.0 matches a 0.0 key (== comparison) here.
Spec-silent: -2 with -0.0 and 0.0 (``neg_zero``): bit-wise says no match; many runtimes hash
floats by value.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import ML, as_str, text_array

op = Operator("LabelEncoder", domain=ML)


@op.reference(1)
def label_encoder_1(x, *, classes_strings=(), default_int64=-1, default_string="_Unused"):
    x = np.asarray(x)
    classes = [as_str(c) for c in classes_strings]
    if x.dtype == object:
        first = {}
        for i, c in enumerate(classes):
            first.setdefault(c, i)
        return np.array([first.get(as_str(v), int(default_int64)) for v in x.reshape(-1)], dtype=np.int64).reshape(x.shape)
    return text_array([classes[v] if 0 <= v < len(classes) else as_str(default_string) for v in x.reshape(-1).tolist()]).reshape(x.shape)


def _table(keys, values):
    return list(zip(keys, values))


def _key_bits(v, dtype):
    if dtype == object:
        return as_str(v)
    return np.asarray(v, dtype=dtype).tobytes()


@op.reference(2)
def label_encoder_2(x, *, keys_strings=None, keys_int64s=None, keys_floats=None, values_strings=None, values_int64s=None,
                    values_floats=None, default_string="_Unused", default_int64=-1, default_float=-0.0):
    x = np.asarray(x)
    keys = keys_strings if keys_strings is not None else keys_int64s if keys_int64s is not None else keys_floats
    kdtype = object if keys_strings is not None else np.int64 if keys_int64s is not None else np.float32
    if values_strings is not None:
        values, vdtype, default = [as_str(v) for v in values_strings], object, as_str(default_string)
    elif values_int64s is not None:
        values, vdtype, default = list(values_int64s), np.int64, default_int64
    else:
        values, vdtype, default = list(values_floats), np.float32, default_float
    table = {}
    for k, v in zip(keys, values):
        table.setdefault(_key_bits(k, kdtype), v)
    flat = [table.get(_key_bits(v, kdtype), default) for v in x.reshape(-1).tolist()]
    return (text_array(flat) if vdtype is object else np.array(flat, dtype=vdtype)).reshape(x.shape)


def _pick(prefix, attrs, tensor):
    for suffix, dt in (("strings", object), ("int64s", np.int64), ("floats", np.float32)):
        if attrs.get(f"{prefix}_{suffix}") is not None:
            v = attrs[f"{prefix}_{suffix}"]
            return text_array(v) if dt is object else np.asarray(v, dtype=dt)
    if tensor is not None:
        t = np.asarray(tensor)
        return text_array(t.reshape(-1)) if t.dtype.kind in "OUS" else t.reshape(-1)
    return None


def _key4(v, dtype):
    if dtype == object:
        return as_str(v)
    f = np.asarray(v, dtype=dtype)
    if dtype.kind == "f":
        if np.isnan(f):
            return "nan"
        return float(f)  # == comparison: -0.0 and 0.0 are one key
    return int(f)


@op.reference(4)
def label_encoder_4(x, *, keys_strings=None, keys_int64s=None, keys_floats=None, keys_tensor=None, values_strings=None,
                    values_int64s=None, values_floats=None, values_tensor=None, default_string="_Unused", default_int64=-1,
                    default_float=-0.0, default_tensor=None):
    x = np.asarray(x)
    keys = _pick("keys", {"keys_strings": keys_strings, "keys_int64s": keys_int64s, "keys_floats": keys_floats}, keys_tensor)
    values = _pick("values", {"values_strings": values_strings, "values_int64s": values_int64s, "values_floats": values_floats}, values_tensor)
    vdtype = values.dtype
    if default_tensor is not None:
        d = np.asarray(default_tensor).reshape(-1)[0]
        default = as_str(d) if vdtype == object else d
    else:
        default = as_str(default_string) if vdtype == object else default_int64 if vdtype.kind in "iu" else default_float
    kdtype = keys.dtype
    table = {_key4(k, kdtype): v for k, v in zip(keys.tolist(), values.tolist())}  # the last repeated key wins
    flat = [table.get(_key4(v, kdtype), default) for v in x.reshape(-1).tolist()]
    return (text_array(flat) if vdtype == object else np.array(flat, dtype=vdtype)).reshape(x.shape)


def _neg_zero_where(inputs, attrs, expected, since):
    x = np.asarray(inputs[0])
    keys = attrs.get("keys_floats")
    if x.dtype.kind != "f" or keys is None:
        return [None]
    k = np.asarray(keys, dtype=np.float32)
    zero_key = np.any(k == 0)
    return [(x == 0) & zero_key if zero_key else None]


op.spec_silent(
    "neg_zero", (2,),
    spec="For key look-up, bit-wise comparison is used so even a float NaN can be mapped to a value in 'values_*' attribute.",
    expected="bit-wise: -0.0 and 0.0 are different keys (the sentence's own words), so -0.0 does not find a 0.0 key",
    where=_neg_zero_where,
    invariants={"a zero maps to the value of a zero key or to the default": lambda c: True if not np.any(c.masks[0]) else bool(np.all(
        np.isin(np.asarray(c.actual[0]).astype(object)[c.masks[0]], list(np.asarray(c.attrs.get("values_floats", c.attrs.get("values_int64s", c.attrs.get("values_strings", [])))).astype(object))
                + [c.attrs.get("default_float", -0.0), c.attrs.get("default_int64", -1), c.attrs.get("default_string", "_Unused")])))},
    readings={"IEEE equality: -0.0 finds the 0.0 key": lambda c: [_zero_key_value(c)]})


def _zero_key_value(c) -> np.ndarray:
    e = np.asarray(c.expected[0])
    keys = np.asarray(c.attrs["keys_floats"], dtype=np.float32)
    values = next(c.attrs[k] for k in ("values_floats", "values_int64s", "values_strings") if k in c.attrs)
    hit = values[int(np.flatnonzero(keys == 0)[0])]
    return np.full(e.shape, as_str(hit) if e.dtype.kind in "OUS" else hit, dtype=e.dtype)


def _repeated_class(inputs, attrs, expected, since):
    x = np.asarray(inputs[0])
    classes = [as_str(c) for c in attrs.get("classes_strings", [])]
    twice = {c for c in classes if classes.count(c) > 1}
    if x.dtype != object or not twice:
        return [None]
    return [np.vectorize(lambda v: as_str(v) in twice, otypes=[bool])(x) if x.size else None]


def _one_of_the_indices(c):
    classes = [as_str(v) for v in c.attrs.get("classes_strings", [])]
    x, y = np.asarray(c.inputs[0]), np.asarray(c.actual[0])
    return bool(all(classes[int(v)] == as_str(s) if 0 <= int(v) < len(classes) else False
                    for s, v in zip(x[c.masks[0]], y[c.masks[0]])))


op.spec_silent(
    "repeated_class", (1,),
    spec="When converting from strings to integers, the string is looked up in the list and the index at which it is found is used as the converted value.",
    expected="the first index of a string listed twice in classes_strings: a look-up in a list finds its first occurrence (list.index)",
    where=_repeated_class,
    invariants={"the value is an index at which classes_strings holds the string": _one_of_the_indices},
    readings={"the last index (a map filled in list order, a later entry overwriting)": lambda c: [_last_index(c)]})


def _last_index(c) -> np.ndarray:
    classes = [as_str(v) for v in c.attrs.get("classes_strings", [])]
    last = {v: i for i, v in enumerate(classes)}
    e = np.asarray(c.expected[0])
    got = [last.get(as_str(v), e.flat[k]) for k, v in enumerate(np.asarray(c.inputs[0]).flat)]
    return np.array(got, dtype=e.dtype).reshape(e.shape)


# -- strategies -----------------------------------------------------------------------------------
def _values_of(d, kind, k):
    if kind == "string":
        return d(S.st.lists(S.st.text(alphabet="abcXYZ", max_size=3), min_size=k, max_size=k))
    if kind in ("int64", "int32", "int16"):
        lo, hi = S.finite_range(kind)
        return d(S.st.lists(S.st.integers(max(lo, -1000), min(hi, 1000)), min_size=k, max_size=k))
    return d(S.st.lists(S.st.floats(-100, 100, width=32), min_size=k, max_size=k))


def _keys_for(d, dtype, k, unique):
    if dtype == "string":
        return d(S.st.lists(S.st.sampled_from(["a", "b", "c", "", "Z z", "0"]), min_size=k, max_size=k, unique=unique))
    if S.is_int(dtype):
        return d(S.st.lists(S.st.integers(-3, 3), min_size=k, max_size=k, unique=unique))
    return d(S.st.lists(S.st.sampled_from([0.0, -0.0, 1.0, -1.5, 2.5, float("nan"), float("inf")]), min_size=k, max_size=k,
                        unique_by=(lambda v: np.float64(v).tobytes()) if unique else None))


def _input(d, dtype, keys):
    shape = S.shapes(d, min_dims=0, max_dims=2, max_side=4)
    n = int(np.prod(shape))
    extra = {"string": ["zz"], "float32": [7.0, -0.0, float("nan")], "float64": [7.0, -0.0, float("nan")]}.get(dtype, [9])
    pool = list(keys) + extra
    vals = [d(S.st.sampled_from(pool)) for _ in range(n)]
    return (np.array(vals, dtype=object) if dtype == "string" else np.array(vals, dtype=np.float64).astype(S.np_dtype(dtype))).reshape(shape)


_ATTR = {"string": "strings", "int64": "int64s", "float32": "floats"}


@op.strategy(1)
def draw_1(d, dtype, opset):
    classes = d(S.st.lists(S.st.sampled_from(["a", "b", "c", "", "Z z"]), min_size=0, max_size=4))
    attrs = {"classes_strings": classes}
    if dtype == "string":
        x = _input(d, dtype, classes)
        if d(S.st.booleans()):
            attrs["default_int64"] = d(S.st.integers(-9, 9))
    else:
        x = S.arrays(d, "int64", lo=-2, hi=5, max_dims=2)
        if d(S.st.booleans()):
            attrs["default_string"] = "none"
    return Example([x], attrs)


@op.edges(1)
def edges_1(dtype, opset):
    attrs = {"classes_strings": ["a", "", "a", "Z z"]}
    if dtype == "string":
        return [Example([S.edge_values(dtype)], attrs, name="edge_values_repeated_class"),
                Example([S.edge_values(dtype)], {**attrs, "default_int64": 42}, name="default"),
                Example([np.zeros((0,), dtype=object)], attrs, name="empty")]
    return [Example([S.edge_values(dtype)], attrs, name="edge_values"),
            Example([np.array([[0, 3], [-1, 4]], dtype=np.int64)], {**attrs, "default_string": "?"}, name="default"),
            Example([np.zeros((0,), dtype=np.int64)], attrs, name="empty")]


@op.strategy(2)
def draw_2(d, dtype, opset):
    k = d(S.st.integers(1, 5))
    keys = _keys_for(d, dtype, k, unique=True)
    vkind = d(S.st.sampled_from(["string", "int64", "float32"]))
    values = _values_of(d, vkind, k)
    attrs = {f"keys_{_ATTR[dtype]}": keys, f"values_{_ATTR[vkind]}": values}
    if d(S.st.booleans()):
        attrs[{"string": "default_string", "int64": "default_int64", "float32": "default_float"}[vkind]] = values[0] if vkind != "string" else "dflt"
    return Example([_input(d, dtype, keys)], attrs)


def _edge_keys(dtype):
    return {"string": ["a", "", "Z z"], "int64": [0, -9223372036854775808, 1], "float32": [0.0, float("nan"), float("inf"), 1.0],
            "int32": [0, -2147483648, 1], "int16": [0, -32768, 1], "float64": [0.0, float("nan"), float("inf"), 1.0]}[dtype]


@op.edges(2)
def edges_2(dtype, opset):
    keys = _edge_keys(dtype)
    out = []
    for vkind, vals in (("string", ["w", "x", "y", "z"]), ("int64", [10, 20, 30, 40]), ("float32", [0.5, -1.0, 2.0, 3.0])):
        attrs = {f"keys_{_ATTR[dtype]}": keys, f"values_{_ATTR[vkind]}": vals[: len(keys)]}
        out.append(Example([S.edge_values(dtype)], attrs, name=f"edge_values_to_{vkind}"))
    out.append(Example([np.zeros((0, 2), dtype=S.np_dtype(dtype))], {f"keys_{_ATTR[dtype]}": keys, "values_int64s": list(range(len(keys)))},
                       name="empty"))
    return out


# -4: every key and value type, through the list attributes or the tensor ones
_V4 = ("string", "int64", "float32", "int32", "int16", "float64")


def _attrs4(d, dtype, keys, vkind, values, tensors):
    attrs = {}
    if tensors or dtype not in _ATTR:
        attrs["keys_tensor"] = np.array(keys, dtype=object) if dtype == "string" else np.array(keys, dtype=np.float64).astype(S.np_dtype(dtype))
    else:
        attrs[f"keys_{_ATTR[dtype]}"] = keys
    if tensors or vkind not in _ATTR:
        attrs["values_tensor"] = np.array(values, dtype=object) if vkind == "string" else np.array(values).astype(S.np_dtype(vkind))
        dflt = {"string": "dflt"}.get(vkind, 5)
        attrs["default_tensor"] = np.array([dflt], dtype=object) if vkind == "string" else np.array([dflt]).astype(S.np_dtype(vkind))
    else:
        attrs[f"values_{_ATTR[vkind]}"] = values
    return attrs


@op.strategy(4)
def draw_4(d, dtype, opset):
    k = d(S.st.integers(1, 5))
    keys = _keys_for(d, dtype, k, unique=False)  # a repeated key: the last one wins (LabelEncoder-4 text)
    vkind = d(S.st.sampled_from(_V4))
    values = _values_of(d, vkind, k)
    attrs = _attrs4(d, dtype, keys, vkind, values, d(S.st.booleans()))
    return Example([_input(d, dtype, keys)], attrs)


@op.edges(4)
def edges_4(dtype, opset):
    keys = _edge_keys(dtype)
    out = []
    for vkind in _V4:
        vals = ["w", "x", "y", "z"] if vkind == "string" else [10, 20, 30, 40]
        for tensors in (False, True):
            if not tensors and (dtype not in _ATTR or vkind not in _ATTR):
                continue
            out.append(Example([S.edge_values(dtype)], _attrs4(None, dtype, keys, vkind, vals[: len(keys)], tensors),
                               name=f"edge_values_to_{vkind}{'_tensors' if tensors else ''}"))
    rep = keys[:2] + keys[:1]
    out.append(Example([S.edge_values(dtype)], _attrs4(None, dtype, rep, "int64", [1, 2, 3], True), name="repeated_key_last_wins"))
    out.append(Example([np.zeros((0, 2), dtype=S.np_dtype(dtype))], _attrs4(None, dtype, keys, "int64", list(range(len(keys))), True), name="empty"))
    return out
