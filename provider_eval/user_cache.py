"""The user's provider-eval cache folder: what can be derived again, kept to save the work."""
import os
from pathlib import Path


def root() -> Path:
    """PROVIDER_EVAL_CACHE_DIR, else $XDG_CACHE_HOME/provider-eval, else ~/.cache/provider-eval."""
    from provider_eval.settings import get_settings

    base = get_settings("cache_dir").cache_dir or Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache") / "provider-eval"
    return Path(base).expanduser()
