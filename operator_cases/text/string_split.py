"""StringSplit: each string split on ``delimiter`` (at most ``maxsplit`` times), padded with
empty strings to the longest split, and the number of substrings (ONNX spec: StringSplit-20).

With a delimiter, "Consecutive delimiters are not grouped together and are deemed to delimit
empty strings" (Python's ``str.split(delimiter, maxsplit)``); unset or "" splits on runs of
whitespace with leading and trailing whitespace removed (Python's ``str.split(None, maxsplit)``,
on ASCII whitespace: our strings hold no other). Y has shape X.shape + (the largest count,).

Spec-silent (declared below): whitespace splitting with ``maxsplit`` leaves a suffix whose
trailing whitespace the spec both keeps ("the trailing suffix of input string after the final
split point is also added") and removes ("leading or trailing whitespace is removed"). We keep it
(Python's str.split); the invariant: equal to ours once stripped. And an empty string with a delimiter: one empty
substring (as Python) or none; the count is 1 or 0.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("StringSplit")
st = S.st


def _parts(s: str, delimiter, maxsplit) -> list[str]:
    limit = -1 if maxsplit is None else int(maxsplit)
    return s.split(delimiter or None, limit)


@op.reference(20)
def string_split(x, *, delimiter=None, maxsplit=None):
    delimiter = delimiter.decode() if isinstance(delimiter, bytes) else delimiter
    x = np.asarray(x, dtype=object)
    parts = {idx: _parts(str(x[idx]), delimiter, maxsplit) for idx in np.ndindex(x.shape)}
    width = max((len(p) for p in parts.values()), default=0)
    y = np.full(x.shape + (width,), "", dtype=object)
    z = np.zeros(x.shape, dtype=np.int64)
    for idx, p in parts.items():
        y[idx][: len(p)] = p
        z[idx] = len(p)
    return y, z


def _suffix_open(inputs, attrs, expected, since):
    delim, maxsplit = attrs.get("delimiter"), attrs.get("maxsplit")
    x = np.asarray(inputs[0], dtype=object)
    if delim or maxsplit is None:
        return [None, None]
    rows = np.zeros(x.shape, dtype=bool)
    for idx in np.ndindex(x.shape):
        p = _parts(str(x[idx]), None, maxsplit)
        rows[idx] = bool(p) and p[-1] != p[-1].strip()
    return [np.broadcast_to(rows[..., None], np.shape(expected[0])), None]


def _same_when_stripped(c) -> bool:
    e, a = np.asarray(c.expected[0], dtype=object), np.asarray(c.actual[0], dtype=object)
    return e.shape == a.shape and all(str(u).strip() == str(v).strip() for u, v in zip(e.ravel(), a.ravel()))


op.spec_silent(
    "whitespace_maxsplit_suffix", (20,),
    spec="after the `maxsplit`th split if the string is not fully split, the trailing suffix of input string after the final "
         "split point is also added [...] In the case where the `delimiter` is unspecified or the empty string, [...] leading or "
         "trailing whitespace is removed in the output.",
    expected="the suffix as it stands in the input, its trailing whitespace kept (Python's str.split(None, maxsplit))",
    where=_suffix_open,
    invariants={"each substring equals ours once stripped of whitespace": _same_when_stripped},
    readings={"the suffix with its trailing whitespace removed ('trailing whitespace is removed in the output')":
              lambda c: [np.vectorize(lambda v: v.rstrip() if isinstance(v, str) else v, otypes=[object])(np.asarray(c.expected[0]))
                         if np.size(c.expected[0]) else None, None]})


def _empty_with_delimiter(inputs, attrs, expected, since):
    x = np.asarray(inputs[0], dtype=object)
    if not attrs.get("delimiter"):
        return [None, None]
    rows = np.vectorize(lambda v: str(v) == "", otypes=[bool])(x) if x.size else np.zeros(x.shape, dtype=bool)
    return [np.broadcast_to(rows[..., None], np.shape(expected[0])), rows]


def _empty_row(c) -> bool:
    x = np.asarray(c.inputs[0], dtype=object)
    y, z = np.asarray(c.actual[0], dtype=object), np.asarray(c.actual[1])
    for idx in np.ndindex(x.shape):
        if c.masks[1][idx] and (int(z[idx]) not in (0, 1) or any(str(v) for v in y[idx])):
            return False
    return True


op.spec_silent(
    "empty_string_with_delimiter", (20,),
    spec="Consecutive delimiters are not grouped together and are deemed to delimit empty strings [...] The second output tensor "
         "represents the number of substrings generated.",
    expected="an empty string holds no delimiter, so it is one (empty) substring: count 1 (Python's ''.split(','))",
    where=_empty_with_delimiter,
    invariants={"the count is 0 or 1 and the row holds only empty strings": _empty_row},
    readings={"no substring: count 0": lambda c: [None, np.zeros_like(np.asarray(c.expected[1]))]})


def _s(values, shape=None):
    a = np.array(values, dtype=object)
    return a.reshape(shape) if shape is not None else a


@op.strategy(20)
def draw(d, dtype, opset):
    shape = S.shapes(d, min_dims=0, max_dims=2, max_side=3)
    n = int(np.prod(shape))
    x = _s(d(st.lists(st.text(alphabet="ab,;  ", max_size=8), min_size=n, max_size=n)), shape)
    attrs = {}
    if d(st.integers(0, 2)):
        attrs["delimiter"] = d(st.sampled_from([",", ";", ",;", " ", ""]))
    if d(st.booleans()):
        attrs["maxsplit"] = d(st.integers(0, 3))
    return Example([x], attrs)


@op.edges(20)
def edges(dtype, opset):
    words = _s(["hello world", "  lead and trail  ", "", "one", "a\tb\nc"])
    csv = _s([["a,b,c", ",,"], ["", "x,"]])
    return [
        Example([words], name="whitespace_default"),
        Example([words], {"delimiter": ""}, name="whitespace_empty_delimiter"),
        Example([csv], {"delimiter": ","}, name="consecutive_delimiters_empty_strings"),
        Example([csv], {"delimiter": ",", "maxsplit": 1}, name="maxsplit_1"),
        Example([_s(["a--b--c", "--", "a-b"])], {"delimiter": "--"}, name="multi_char_delimiter"),
        Example([_s(["a b c d"])], {"maxsplit": 2}, name="whitespace_maxsplit"),
        Example([_s(["a b  c  "])], {"maxsplit": 1}, name="whitespace_maxsplit_trailing"),  # spec-silent: the suffix
        Example([_s(["a,b", "c"])], {"delimiter": ",", "maxsplit": 0}, name="maxsplit_0"),
        Example([_s(["x,y"])], {"delimiter": ",", "maxsplit": 5}, name="maxsplit_beyond"),
        Example([_s("a b")], name="scalar"),
        Example([_s(["", "  "])], name="nothing_to_split"),
        Example([_s([], (0,))], {"delimiter": ","}, name="empty"),
        Example([_s(["文,字", "é"])], {"delimiter": ","}, name="utf8"),
    ]
