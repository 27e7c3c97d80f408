"""Image and signal operators (issue 19): hand-computed values from the spec's formulas,
checked against our references (the expected numbers are written here, not computed by them)."""

import numpy as np
import pytest

from harness.registry import REGISTRY, SilentCheck, load_all, spec_silent_point


def ref(op, since):
    load_all()
    return REGISTRY[("", op, since)].reference


def test_windows_periodic_and_symmetric():
    hann = ref("HannWindow", 17)
    np.testing.assert_allclose(hann(np.array(4)), [0, 0.5, 1, 0.5], atol=1e-7)  # N = 4: 0.5 - 0.5 cos(pi n / 2)
    np.testing.assert_allclose(hann(np.array(5), periodic=0), [0, 0.5, 1, 0.5, 0], atol=1e-7)  # N = size - 1
    np.testing.assert_allclose(ref("HammingWindow", 17)(np.array(2), output_datatype=11), [4 / 46, 1.0], rtol=1e-15)
    np.testing.assert_allclose(ref("BlackmanWindow", 17)(np.array(3), periodic=0), [0, 1, 0], atol=1e-7)
    assert hann(np.array(0)).shape == (0,) and hann(np.array(3)).dtype == np.float32


def test_blackman_peak_is_one_in_an_integer_type():
    # 0.42 + 0.5 + 0.08 is exactly 1; a float64 sum one ulp below must not truncate to 0
    assert ref("BlackmanWindow", 17)(np.array(5), periodic=0, output_datatype=7).tolist() == [0, 0, 1, 0, 0]


def test_dft_forward_onesided_inverse_and_irfft():
    x = np.array([1.0, 2, 3, 4], dtype=np.float32).reshape(1, 4, 1)
    y = [[10, 0], [-2, 2], [-2, 0], [-2, -2]]  # sum_n x[n] e^{-2 pi j k n / 4}
    dft = ref("DFT", 20)
    np.testing.assert_allclose(dft(x)[0], y, atol=1e-6)
    np.testing.assert_allclose(dft(x, None, None, onesided=1)[0], y[:3], atol=1e-6)
    spec = np.array(y, dtype=np.float32).reshape(1, 4, 2)
    np.testing.assert_allclose(dft(spec, None, None, inverse=1)[0], [[1, 0], [2, 0], [3, 0], [4, 0]], atol=1e-6)
    half = spec[:, :3]  # IRFFT: default dft_length 2 * (3 - 1) = 4, real output
    np.testing.assert_allclose(dft(half, None, None, inverse=1, onesided=1)[0], [[1], [2], [3], [4]], atol=1e-6)
    # dft_length 2 truncates to [1, 2]: [3, -1]; the axis of DFT-17 is an attribute
    np.testing.assert_allclose(ref("DFT", 17)(x, np.array(2), axis=1)[0], [[3, 0], [-1, 0]], atol=1e-6)
    with pytest.raises(ValueError):
        dft(x, None, np.array(2))  # the complex dimension is not an axis


def test_stft_frames_and_default_frame_length():
    s = np.array([1.0, 2, 3, 4, 5]).reshape(1, 5, 1)
    out = ref("STFT", 17)(s, np.array(2), None, np.array(2))  # frames [1, 2], [3, 4]: DFT [3, -1], [7, -1]
    np.testing.assert_allclose(out[0, :, :, 0], [[3, -1], [7, -1]], atol=1e-12)
    assert out.shape == (1, 2, 2, 2)
    whole = ref("STFT", 17)(s, np.array(1))  # neither window nor frame_length: one frame of the whole signal
    assert whole.shape == (1, 1, 3, 2) and whole[0, 0, 0, 0] == 15
    windowed = ref("STFT", 17)(s, np.array(3), np.array([0.0, 1.0]))  # frame_length from the window
    np.testing.assert_allclose(windowed[0, :, :, 0], [[2, -2], [5, -5]], atol=1e-12)


def test_affine_grid_corners():
    theta = np.array([[[1.0, 0, 0.25], [0, 1, 0]]], dtype=np.float32)
    g = ref("AffineGrid", 20)(theta, np.array([1, 1, 2, 2]))  # align_corners=0: pixel centres at -0.5, 0.5
    np.testing.assert_allclose(g[0], [[[-0.25, -0.5], [0.75, -0.5]], [[-0.25, 0.5], [0.75, 0.5]]])
    g = ref("AffineGrid", 20)(theta, np.array([1, 1, 1, 3]), align_corners=1)  # x at -1, 0, 1 along W
    np.testing.assert_allclose(g[0, 0, :, 0], [-0.75, 0.25, 1.25])
    ident3 = np.eye(3, 4, dtype=np.float64)[None]
    g = ref("AffineGrid", 20)(ident3, np.array([1, 1, 2, 1, 3]))  # (N, D, H, W, 3), (x, y, z) = (W, H, D)
    assert g.shape == (1, 2, 1, 3, 3) and g.dtype == np.float64
    np.testing.assert_allclose(g[0, 1, 0, 2], [2 / 3, 0, 0.5])


def test_mel_weight_matrix_invariants_can_fail():
    mel = ref("MelWeightMatrix", 17)
    m = mel(np.array(4), np.array(16), np.array(8000), np.float32(0), np.float32(4000))
    assert m.shape == (9, 4) and m.max(axis=0).tolist() == [1, 1, 1, 1]
    point = spec_silent_point("MelWeightMatrix.sampling")
    check = point.invariants["shape, values in [0, 1], each column zero or one triangle peaking at 1"]

    def holds(actual):
        return check(SilentCheck([], {}, [m], [actual], [np.ones(m.shape, bool)], 17))

    assert holds(m)
    two_peaks = m.copy()
    two_peaks[:, 0] = [1, 0, 1, 0, 0, 0, 0, 0, 0]
    assert not holds(two_peaks)
    assert not holds(m * 0.9)  # a peak below 1.0
    assert not holds(m[:, :3])
