"""RegexFullMatch: whether each string fully matches an RE2 pattern (ONNX spec: RegexFullMatch-20).

The oracle is Python's ``re.fullmatch``, used only on patterns where RE2 syntax and Python's ``re``
agree: literals, ``.`` (not newline in both), classes ``[a-c]`` / ``[^...]``, ``\\d`` ``\\w`` ``\\s``
on ASCII text (RE2's are ASCII-only, Python's Unicode: our strings for those are ASCII), groups,
alternation, ``* + ? {m,n}`` and their lazy forms (same set of full matches), ``(?i)``. No
backreferences or lookarounds (RE2 has none), no possessive quantifiers, no Unicode classes.
"""

import re

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("RegexFullMatch")
st = S.st

PATTERNS = ("a+b*", "[a-c]+", "(ab|cd)\\d?", ".*", "", "\\w+@\\w+\\.com", "(?i)xyz", "[^ ]+ [^ ]+", "a{2,3}", "\\s*\\d+\\s*",
            "X.?Z", "(a|b)*?c")


@op.reference(20)
def regex_full_match(x, *, pattern):
    pattern = pattern.decode() if isinstance(pattern, bytes) else pattern
    rx = re.compile(pattern)
    x = np.asarray(x, dtype=object)
    out = np.zeros(x.shape, dtype=bool)
    for idx in np.ndindex(x.shape):
        out[idx] = rx.fullmatch(str(x[idx])) is not None
    return out


def _s(values, shape=None):
    a = np.array(values, dtype=object)
    return a.reshape(shape) if shape is not None else a


@op.strategy(20)
def draw(d, dtype, opset):
    pattern = d(st.sampled_from(PATTERNS))
    shape = S.shapes(d, min_dims=0, max_dims=2, max_side=4)
    n = int(np.prod(shape))
    words = d(st.lists(st.text(alphabet="abcdXYZxyz019 @.", max_size=6), min_size=n, max_size=n))
    return Example([_s(words, shape)], {"pattern": pattern})


@op.edges(20)
def edges(dtype, opset):
    mails = _s(["ab@cd.com", "ab@cd.org", "@cd.com", "a_1@b2.com", "ab@cd.com\n"])
    return [
        Example([_s(["ab", "abb", "b", "", "aab x"])], {"pattern": "a+b*"}, name="plus_star"),
        Example([mails], {"pattern": "\\w+@\\w+\\.com"}, name="email_like"),
        Example([_s(["XYZ", "xyz", "xYz", "xyz "])], {"pattern": "(?i)xyz"}, name="case_insensitive"),
        Example([_s(["", "a", "\n"])], {"pattern": ""}, name="empty_pattern"),
        Example([_s(["", "abc", "a\nb"])], {"pattern": ".*"}, name="dot_star_newline"),
        Example([_s([["ab1", "cd"], ["ab12", "ef"]])], {"pattern": "(ab|cd)\\d?"}, name="alternation_2d"),
        Example([_s("aaa")], {"pattern": "a{2,3}"}, name="scalar_repeat"),
        Example([_s([], (0, 3))], {"pattern": "a+"}, name="empty"),
        Example([_s(["文字", "é", "ab"])], {"pattern": "..?"}, name="utf8_code_points"),
    ]
