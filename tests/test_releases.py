"""Releases side by side (``--backend NAME@VERSION``) and ``bisect``: spec parsing, the
release range, the binary search and an install that fails. Installing a real release needs
the registry and a minute; it is exercised by hand (see harness/backends/releases.py)."""

import pytest

from harness.backends import UnknownBackend, load_backend_class
from harness.backends import releases as R


def test_a_release_spec_names_a_runtime_and_a_version():
    cls = load_backend_class("onnxruntime@1.28")
    assert cls.name == "onnxruntime@1.28" and cls.base == "onnxruntime" and cls.release == "1.28" and cls.dist() == "onnxruntime"
    assert R.requirement("onnxruntime", "1.28") == "onnxruntime==1.28.*"
    assert R.requirement("onnxruntime", "1.28.0") == "onnxruntime==1.28.0"
    with pytest.raises(UnknownBackend, match="onnxruntime@VERSION"):
        load_backend_class("kernels@1.0")


def test_the_range_keeps_the_newest_patch_of_each_line_unless_patches_are_given():
    versions = ["1.22.0", "1.23.0", "1.23.2", "1.24.1", "1.24.4", "1.25.0", "1.25.1", "1.26.0"]
    assert R.releases_between(versions, "1.23", "1.25") == ["1.23.2", "1.24.4", "1.25.1"]
    assert R.releases_between(versions, "1.23.2", "1.24.4") == ["1.23.2", "1.24.1", "1.24.4"]
    assert R.version_key("1.10.0") > R.version_key("1.9.2")


@pytest.mark.parametrize("change_at, expected", [(3, 3), (1, 1), (8, 8), (None, None)])
def test_bisect_names_the_first_release_that_changed_and_asks_few(change_at, expected):
    versions = [f"1.{n}.0" for n in range(9)]
    asked = []

    def outcome_at(v):
        asked.append(v)
        return "pass" if change_at is not None and versions.index(v) >= change_at else "unsupported"

    index, seen = R.first_change(versions, outcome_at)
    assert index == expected
    assert len(asked) == len(set(asked)) <= 2 + 3  # both ends, then log2(9) rounded up
    if expected is not None:
        assert seen[versions[expected]] == "pass" and seen[versions[expected - 1]] == "unsupported"


def test_an_install_that_fails_is_unavailable_with_pips_words(tmp_path, monkeypatch):
    monkeypatch.setenv("ONNX_HARNESS_CACHE", str(tmp_path))
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # nothing to install from: pip fails at once
    cls = load_backend_class("onnxruntime@1.0.99")
    ok, reason = cls.available()
    assert not ok and "cannot install onnxruntime==1.0.99" in reason and "pip exited" in reason
    assert not (R.environment_dir("onnxruntime", "1.0.99") / "ready").exists()
