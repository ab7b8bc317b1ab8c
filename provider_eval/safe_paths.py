"""Paths built from input (source names, record ids) stay inside the folder they belong in."""
import re
from pathlib import Path

from provider_eval.errors import UnsafePath

# A source name is one path component: lower-case letters, digits, '.', '_' and '-', starting with a
# letter or digit (so never '', '.', '..', an absolute path, a slash or a hidden file).
SLUG = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
SLUG_RULE = "1-64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit"


def is_slug(name: object) -> bool:
    """True when name can be used as one path component as it is."""
    return isinstance(name, str) and SLUG.fullmatch(name) is not None


def child(root: Path, *parts: str) -> Path:
    """root/parts..., refused unless every part is a plain component and the result resolves under root."""
    for part in parts:
        if not isinstance(part, str) or not part or part in (".", "..") or "/" in part or "\\" in part \
                or "\0" in part:
            raise UnsafePath(f"{part!r} cannot be part of a path under {root}")
    path = Path(root).joinpath(*parts)
    resolved_root = Path(root).resolve()
    if not path.resolve().is_relative_to(resolved_root):
        raise UnsafePath(f"{path} resolves outside {resolved_root}")
    return path
