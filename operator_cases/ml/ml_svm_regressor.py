"""SVMRegressor (ai.onnx.ml): y = sum_i coefficients[i] K(x, sv_i) + rho[0], then the post
transform; one_class=1 gives the one-class SVM's decision, +1 inside and -1 outside (ONNX spec:
SVMRegressor-1).

The kernels are libsvm's (see _ml_util.svm_kernel), kernel_params = [gamma, coef0, degree];
support_vectors is [n_supports, F] flat. The spec gives rho no sign: we add it, as the ONNX-ML
converters store it (scikit-learn's intercept_, libsvm's -rho) and ONNX Runtime and onnx.reference
read it. one_class: +1 where the decision value is > 0, -1 otherwise (libsvm's svm_predict for a
one-class model: dec_value > 0 ? 1 : -1). Computed in float64, rounded once to float32.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import KERNELS, ML, TRANSFORMS, as_str, declare_transform_points, ensure_2d, float_out, post_transform, svm_kernel

op = Operator("SVMRegressor", domain=ML)


@op.reference(1)
def svm_regressor(x, *, coefficients=(), support_vectors=(), n_supports=0, rho=(0.0,), kernel_type="LINEAR", kernel_params=None,
                  one_class=0, post_transform="NONE"):
    x = ensure_2d(np.asarray(x).astype(np.float64))
    sv = np.asarray(support_vectors, dtype=np.float32).astype(np.float64).reshape(int(n_supports), x.shape[1])
    coef = np.asarray(coefficients, dtype=np.float32).astype(np.float64)[: int(n_supports)]
    k = svm_kernel(as_str(kernel_type), kernel_params, x, sv)
    with np.errstate(all="ignore"):
        y = (k @ coef if k.size else np.zeros(x.shape[0])) + float(np.float32(rho[0]))
    if one_class:
        y = np.where(y > 0, 1.0, -1.0)
    return float_out(_post(y.reshape(-1, 1), post_transform))


_post = post_transform
declare_transform_points(op, (1,), 0)


def svr_example(d, dtype, n, f, s, kind, one_class, how, name=""):
    pick = (lambda lo, hi: float(np.float32(d.uniform(lo, hi)))) if hasattr(d, "uniform") else (lambda lo, hi: float(np.float32(d(S.st.floats(lo, hi)))))
    x = np.asarray([[pick(-2, 2) for _ in range(f)] for _ in range(n)], dtype=np.float64).reshape(n, f).astype(S.np_dtype(dtype))
    if not S.is_float(dtype):
        x = np.round(np.asarray(x, dtype=np.float64)).astype(S.np_dtype(dtype))
    scale = 0.05 if how == "PROBIT" else 1.0
    attrs = {"n_supports": s, "support_vectors": [pick(-2, 2) for _ in range(s * f)], "coefficients": [scale * pick(-1, 1) for _ in range(s)],
             "rho": [0.5 if how == "PROBIT" else pick(-1, 1)], "kernel_type": kind, "post_transform": how}
    if kind != "LINEAR":
        attrs["kernel_params"] = [pick(0.05, 0.5), pick(-1, 1), float(int(pick(1, 3.99)))]
    if one_class:
        attrs["one_class"] = 1
    return Example([x], attrs, name=name)


@op.strategy(1)
def draw(d, dtype, opset):
    return svr_example(d, dtype, d(S.st.integers(0, 4)), d(S.st.integers(1, 3)), d(S.st.integers(1, 5)), d(S.st.sampled_from(KERNELS)),
                       d(S.st.booleans()) and d(S.st.booleans()), d(S.st.sampled_from(TRANSFORMS)))


@op.edges(1)
def edges(dtype, opset):
    rng = np.random.default_rng(6)
    out = [svr_example(rng, dtype, 4, 3, 4, kind, False, "NONE", name=f"kernel_{kind.lower()}") for kind in KERNELS]
    out += [svr_example(rng, dtype, 4, 3, 4, "RBF", True, "NONE", name="one_class")]
    out += [svr_example(rng, dtype, 4, 2, 3, "LINEAR", False, how, name=f"post_{how.lower()}") for how in TRANSFORMS]
    out += [svr_example(rng, dtype, 0, 2, 3, "RBF", False, "NONE", name="empty"),
            svr_example(rng, dtype, 3, 2, 200, "RBF", False, "NONE", name="many_support_vectors")]
    e = S.edge_values(dtype).reshape(-1, 1)
    out.append(Example([e], {"n_supports": 2, "support_vectors": [1.0, -0.5], "coefficients": [0.5, -1.0], "rho": [0.25],
                             "kernel_type": "POLY", "kernel_params": [0.5, 1.0, 2.0]}, name="edge_values"))
    return out
