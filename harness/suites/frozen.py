"""Drawn cases, frozen: drawn once, written to the corpus folder, read back by every backend,
worker and later run, so a case id always names the same inputs (a failure is replayable).

Used by the suites whose inputs Hypothesis draws (``operators``, ``generated``). A frozen file
carries a key (a digest of the sources its cases depend on and of the installed onnx and
numpy); a file with another key, or one that cannot be read, is drawn again.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


@contextmanager
def without_local_constants() -> Iterator[None]:
    """Hypothesis mixes literals found in every 'local' module loaded in the process into what
    it draws, so the same seed gave different inputs under the CLI and under pytest. A case id
    must name the same inputs everywhere, so generation runs without those constants."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - older or newer Hypothesis without the feature
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if original is None or cache is None:  # pragma: no cover
        yield
        return
    providers._get_local_constants = providers.Constants
    cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.cache.clear()


def digest(sources: Iterable[Path], *versions: str) -> str:
    """The key of a frozen file: the bytes of ``sources`` and the ``versions`` given."""
    h = hashlib.sha256("/".join(versions).encode())
    for source in sources:
        h.update(source.read_bytes())
    return h.hexdigest()


def load_or_build(file: Path, key: str, build: Callable[[], T]) -> T:
    """What ``file`` holds under ``key``; otherwise ``build()``, written to ``file`` first
    (atomically: concurrent builders of one file each write whole files)."""
    if file.exists():
        try:
            with open(file, "rb") as fh:  # our own cache, written below; never a downloaded file
                stored_key, value = pickle.load(fh)
            if stored_key == key:
                return value
        except Exception:
            pass  # unreadable or from another version: rebuild
    value = build()
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_suffix(f".{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        pickle.dump((key, value), fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, file)
    return value
