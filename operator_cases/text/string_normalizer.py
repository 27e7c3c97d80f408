"""StringNormalizer: drop stopwords from a [C] or [1, C] string tensor, then lower- or uppercase
(ONNX spec: StringNormalizer-10).

Stopwords match exactly (is_case_sensitive=1) or ignoring case (the default 0); the case change
is NONE (default), LOWER or UPPER; "If all elements in X are dropped, the output will be the
empty value of string tensor with shape [1] if input shape is [C] and shape [1, 1] if input
shape is [1, C]". Our case mapping is Python's str.lower / str.upper (Unicode default case
mapping); the ``locale`` attribute is "Environment dependent", so the examples that set it use
en_US, the default the spec names, and ASCII / Latin-1 text whose mapping no locale changes.

Spec-silent (declared below): an input of zero elements ([0] or [1, 0]): nothing is dropped, so
the all-dropped rule does not plainly apply; we return its [1] / [1, 1] empty string (no element
remains), and accept an empty output as well.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("StringNormalizer")
st = S.st


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


@op.reference(10)
def string_normalizer(x, *, case_change_action="NONE", is_case_sensitive=0, locale=None, stopwords=None):
    x = np.asarray(x, dtype=object)
    if x.ndim == 1:
        row, two_d = list(x), False
    elif x.ndim == 2 and x.shape[0] == 1:
        row, two_d = list(x[0]), True
    else:
        raise ValueError(f"StringNormalizer takes [C] or [1, C], got {x.shape}")
    action = _text(case_change_action)
    if action not in ("NONE", "LOWER", "UPPER"):
        raise ValueError(f"case_change_action {action!r}")
    stop = [_text(w) for w in (stopwords or [])]
    if is_case_sensitive:
        kept = [_text(s) for s in row if _text(s) not in set(stop)]
    else:
        low = {w.lower() for w in stop}
        kept = [_text(s) for s in row if _text(s).lower() not in low]
    if action == "LOWER":
        kept = [s.lower() for s in kept]
    elif action == "UPPER":
        kept = [s.upper() for s in kept]
    if not kept:  # an empty input too (the spec-silent point below)
        kept = [""]
    out = np.array(kept, dtype=object).reshape(-1)
    return out.reshape(1, -1) if two_d else out


op.spec_silent(
    "empty_input", (10,),
    spec="If all elements in X are dropped, the output will be the empty value of string tensor with shape [1] if input shape "
         "is [C] and shape [1, 1] if input shape is [1, C].",
    # no reading computes the other choice: an empty output has another shape, judged before any open element
    expected="an input with no elements (C = 0) is treated as one whose elements were all dropped: [\"\"] (or [[\"\"]])",
    where=lambda inputs, attrs, expected, since: [np.full(np.shape(expected[0]), np.asarray(inputs[0]).size == 0)],
    invariants={"the output is empty, or the single empty string of the all-dropped rule":
                lambda c: np.asarray(c.actual[0]).size == 0 or (np.asarray(c.actual[0]).size == 1
                                                                and str(np.asarray(c.actual[0]).ravel()[0]) == "")})


def _s(values, shape=None):
    a = np.array(values, dtype=object)
    return a.reshape(shape) if shape is not None else a


@op.strategy(10)
def draw(d, dtype, opset):
    c = d(st.integers(1, 5))
    words = d(st.lists(st.sampled_from(["the", "The", "a", "Monday", "mon", "dog", "DOG", "x1"]), min_size=c, max_size=c))
    x = _s(words).reshape(1, c) if d(st.booleans()) else _s(words)
    attrs = {}
    if d(st.booleans()):
        attrs["stopwords"] = d(st.lists(st.sampled_from(["the", "a", "monday", "DOG"]), min_size=1, max_size=3, unique=True))
    if d(st.booleans()):
        attrs["is_case_sensitive"] = d(st.integers(0, 1))
    if d(st.integers(0, 2)):
        attrs["case_change_action"] = d(st.sampled_from(["NONE", "LOWER", "UPPER"]))
    return Example([x], attrs)


@op.edges(10)
def edges(dtype, opset):
    days = _s(["monday", "tuesday", "wednesday", "thursday"])
    mixed = _s(["Monday", "tuesday", "MONDAY", "Ünïcode", "straße", ""])
    return [
        Example([days], {"stopwords": ["monday"]}, name="spec_stopwords"),
        Example([mixed], {"stopwords": ["monday"], "case_change_action": "LOWER"}, name="insensitive_lower"),
        Example([mixed], {"stopwords": ["Monday"], "is_case_sensitive": 1, "case_change_action": "UPPER"}, name="sensitive_upper"),
        Example([mixed.reshape(1, -1)], {"case_change_action": "NONE", "stopwords": [""]}, name="two_d_empty_stopword"),
        Example([days.reshape(1, -1)], {"stopwords": list(days)}, name="all_dropped_2d"),
        Example([days], {"stopwords": ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY"]}, name="all_dropped_1d"),
        Example([days], {"case_change_action": "UPPER", "locale": "en_US"}, name="locale_en_US"),
        Example([_s([], (0,))], {"case_change_action": "LOWER"}, name="empty"),
    ]
