"""Rendered charts kept per Vega-Lite spec, so a report re-renders only the charts whose data changed.

vl-convert turns the same spec into the same SVG every time, and each render costs its JavaScript
runtime ~0.1-0.2 s: the bundled samples' 16 charts were 2.6 s of a 4.6 s `report`. An entry is
keyed by the spec and vl-convert's version, written atomically, and touched when read; the least
recently used ones go once the folder holds more than MAX_ENTRIES. Deleting the folder is always safe.
"""
import hashlib
import os
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Callable

from provider_eval import user_cache

MAX_ENTRIES = 1000  # ~20-60 kB each: tens of MB at most


def folder() -> Path:
    """Where rendered charts are kept (the user's provider-eval cache folder)."""
    return user_cache.root() / "charts"


def _key(spec: str) -> str:
    """The spec and the renderer's version: another vl-convert may draw the same spec differently."""
    version = metadata.version("vl-convert-python")
    return hashlib.sha256(f"{version}\0{spec}".encode()).hexdigest()


def _kept(path: Path) -> str | None:
    """The SVG kept at path, or None when there is none or it is not a whole SVG element."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text if text.startswith("<svg") and text.rstrip().endswith("</svg>") else None


def svg(spec: str, render: Callable[[str], str]) -> str:
    """The SVG of spec: the kept one if any, else render(spec), kept for next time."""
    path = folder() / f"{_key(spec)}.svg"
    text = _kept(path)
    if text is not None:
        try:
            os.utime(path)  # recently used: the last to be pruned
        except OSError:
            pass
        return text
    text = render(spec)
    _keep(path, text)
    return text


def _keep(path: Path, text: str) -> None:
    """Write text to path atomically and prune the folder; a folder that cannot be written keeps nothing."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".keep-", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
        _prune(path.parent)
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _prune(where: Path) -> None:
    """Remove the least recently used entries beyond MAX_ENTRIES."""
    entries = []
    for entry in os.scandir(where):
        if entry.name.endswith(".svg"):
            try:
                entries.append((entry.stat().st_mtime_ns, entry.path))
            except OSError:  # removed meanwhile by another report
                continue
    for _, stale in sorted(entries)[:max(0, len(entries) - MAX_ENTRIES)]:
        Path(stale).unlink(missing_ok=True)
