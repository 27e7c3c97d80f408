"""Drawn cases, frozen: drawn once, written to the corpus folder, read back by every backend,
worker and later run, so a case id always names the same inputs (a failure is replayable).

Used by the suites whose inputs Hypothesis draws (``operators``, ``generated``). A frozen file
carries a key (a digest of the sources its cases depend on and of the installed onnx and
numpy) and the sha256 of its content; a file with another key is drawn again, a file whose
content does not match its sha256 is refused.
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
    value = load_frozen(file, key)
    if value is None:
        value = build()
        write_frozen(file, key, value)
    return value


def load_frozen(file: Path, key: str) -> T | None:
    """What ``file`` holds under ``key``, or None when it must be drawn (no file, or a file drawn
    under another key: the sources or versions changed since). A file holds its key, the sha256
    of its payload and the payload (never None): a file under the right key whose payload does
    not hash to the recorded digest (changed or cut short after it was written) is refused with
    a :class:`CorpusError` naming it, never silently drawn again."""
    from .onnx_official import CorpusError

    if not file.exists():
        return None
    try:
        with open(file, "rb") as fh:  # our own cache, written by write_frozen; never a downloaded file
            stored = pickle.load(fh)
    except (AttributeError, ImportError):  # an older layout naming classes that moved: drawn again
        return None
    except (pickle.UnpicklingError, EOFError, ValueError) as exc:
        raise CorpusError(f"frozen cases {file} are unreadable ({type(exc).__name__}: {exc}); delete the file to draw them again") from exc
    # (key, value) pairs of an older harness are drawn again
    stored_key, sha256, payload = stored if isinstance(stored, tuple) and len(stored) == 3 else (None, None, b"")
    if stored_key != key:
        return None
    if hashlib.sha256(payload).hexdigest() != sha256:
        raise CorpusError(f"frozen cases {file} do not match the sha256 they were written with (changed or half-written); "
                          f"delete the file to draw them again")
    return pickle.loads(payload)


def write_frozen(file: Path, key: str, value: object) -> None:
    """Freeze ``value`` in ``file`` under ``key``, atomically (a reader never sees half a file)."""
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_suffix(f".{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        pickle.dump((key, hashlib.sha256(payload).hexdigest(), payload), fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, file)
