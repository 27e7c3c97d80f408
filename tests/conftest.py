import os

from hypothesis import settings

# CI=true makes Hypothesis load its own "ci" profile; ours is explicit and deterministic.
settings.register_profile("harness-tests", max_examples=50, deadline=None, derandomize=True, print_blob=True)
settings.load_profile("harness-tests")
os.environ.setdefault("ONNX_HARNESS_QUIET", "1")
