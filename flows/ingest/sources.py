"""Read sources.yaml: which inputs exist, their format and the metadata defaults they need."""
import datetime as dt
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from flows.ingest.adapters import ADAPTERS
from flows.ingest.yaml_lines import load_yaml_with_lines
from provider_eval.errors import ConfigError
from provider_eval.safe_paths import SLUG_RULE, is_slug

SOURCE_KEYS = {"name", "kind", "format", "path", "url", "defaults", "description", "max_quote_age_days",
               "auth_env", "fetch", "max_file_bytes", "max_line_chars", "perf_confirmed"}
# A `url:` source's download limits (flows/ingest/fetch.py FetchPolicy); each is optional.
FETCH_KEYS = {"timeout_s", "deadline_s", "max_bytes", "attempts", "backoff_s", "max_retry_after_s"}
ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
# Top-level `settings:` keys; a source may override each with a key of the same name.
SETTING_KEYS = {"max_quote_age_days", "max_file_bytes", "max_line_chars"}
# Size caps checked before a file is parsed (bad-input catalogue #41-42); whole numbers > 0.
SIZE_LIMIT_KEYS = ("max_file_bytes", "max_line_chars")
DEFAULT_KEYS = {
    "provider", "gpu_model", "gpu_count", "model_id", "precision", "engine",
    "engine_version", "rocm_version", "currency", "region", "node_count",
    # When a quote source's undated rows were observed (a date or an ISO time with an offset).
    "observed_at",
    # model-config sources (docs/formats/model-config.md)
    "hf_repo_id", "source_url", "params_total", "params_active", "rope_scaling",
}
KINDS = {"quotes", "benchmarks", "models"}


@dataclass(frozen=True)
class Source:
    """One declared input: a name, what it holds, how to read it, where it is."""

    name: str
    kind: str
    format: str
    path: str
    base_dir: Path
    line: int
    defaults: dict = field(default_factory=dict)
    max_quote_age_days: int | None = None
    # A `url:` source is downloaded at refresh; its API token comes from the environment variable
    # named in auth_env (the name is configuration, the value never is).
    url: str | None = None
    auth_env: str | None = None
    fetch: dict = field(default_factory=dict)
    # Size caps for this source's files (settings or the source); absent = the adapters' defaults.
    size_limits: dict = field(default_factory=dict)
    # The user confirms this benchmark source's runs are real although far above every published
    # result (PERF_IMPLAUSIBLE, docs/cost-model.md): its runs are ranked again.
    perf_confirmed: bool = False
    # Benchmark sources: (name, model_id) of the models model-config sources declare, so a run may name them.
    declared_models: tuple = ()

    def adapter_options(self) -> dict:
        """What the adapter receives: the defaults plus this source's quote settings and size caps."""
        options = {**self.defaults, **self.size_limits}
        if self.perf_confirmed:
            options["perf_confirmed"] = True
        if self.declared_models:
            options["declared_models"] = [list(pair) for pair in self.declared_models]
        if self.max_quote_age_days is None:
            return options
        return {**options, "max_quote_age_days": self.max_quote_age_days}

    def files(self) -> list[Path]:
        """The files the path glob matches today, sorted for a stable order (none for a url source)."""
        if self.url is not None:
            return []
        pattern = Path(self.path)
        if pattern.is_absolute():
            root, rel = Path(pattern.anchor), str(pattern.relative_to(pattern.anchor))
        else:
            root, rel = self.base_dir, self.path
        return sorted(p for p in root.glob(rel) if p.is_file())


def _check_age(value, where: str):
    """max_quote_age_days: a whole number of days ≥ 0, or absent (no age limit)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}: max_quote_age_days must be a whole number of days >= 0, got {value!r}")
    return value


def _check_observed_at(value, kind: str, where: str) -> str:
    """defaults.observed_at: a date (midnight UTC) or an ISO time with an offset, not in the future; as ISO UTC text."""
    if kind != "quotes":
        raise ConfigError(f"{where}: defaults.observed_at applies to quote sources only")
    if isinstance(value, str):
        try:
            value = dt.date.fromisoformat(value) if len(value.strip()) == 10 else dt.datetime.fromisoformat(
                value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ConfigError(f"{where}: defaults.observed_at {value!r} is not a date (2025-09-17) or an "
                              "ISO-8601 time with an offset (2025-09-17T00:00:00Z)") from None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            raise ConfigError(f"{where}: defaults.observed_at {value.isoformat()} has no UTC offset (add Z or +hh:mm)")
        stamp = value.astimezone(dt.timezone.utc)
    elif isinstance(value, dt.date):
        stamp = dt.datetime.combine(value, dt.time(), tzinfo=dt.timezone.utc)
    else:
        raise ConfigError(f"{where}: defaults.observed_at {value!r} is not a date or an ISO-8601 time")
    if stamp > dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1):
        raise ConfigError(f"{where}: defaults.observed_at {stamp.isoformat()} is in the future")
    return stamp.isoformat()


def _check_size_limits(raw: dict, where: str) -> dict:
    """max_file_bytes / max_line_chars: whole numbers > 0 where given."""
    limits = {}
    for key in SIZE_LIMIT_KEYS:
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"{where}: {key} must be a whole number > 0, got {value!r}")
        limits[key] = value
    return limits


def load_settings(doc: dict, file: Path) -> dict:
    """The optional top-level `settings:` mapping (defaults for every source)."""
    settings = doc.get("settings") or {}
    line = getattr(settings, "line", 0)
    if not isinstance(settings, dict):
        raise ConfigError(f"{file}: line {line}: 'settings' must be a mapping")
    unknown = set(settings) - SETTING_KEYS
    if unknown:
        raise ConfigError(f"{file}: line {line}: unknown setting(s) {sorted(unknown)}; allowed: {sorted(SETTING_KEYS)}")
    return {"max_quote_age_days": _check_age(settings.get("max_quote_age_days"), f"{file}: line {line}"),
            **_check_size_limits(settings, f"{file}: line {line}")}


def _check_url(raw: dict, where: str) -> tuple[str | None, str | None, dict]:
    """url, auth_env and fetch limits of a downloaded source; secrets never live in sources.yaml."""
    url = raw.get("url")
    if url is None:
        for key in ("auth_env", "fetch"):
            if key in raw:
                raise ConfigError(f"{where}: '{key}' applies only to a 'url' source")
        return None, None, {}
    if "path" in raw:
        raise ConfigError(f"{where}: give either 'path' or 'url', not both")
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{where}: url must be an http(s) address, got {url!r}")
    if parts.username or parts.password:
        raise ConfigError(f"{where}: url must not embed credentials; name an environment variable in 'auth_env'")
    auth_env = raw.get("auth_env")
    if auth_env is not None and not (isinstance(auth_env, str) and ENV_NAME.match(auth_env)):
        raise ConfigError(f"{where}: auth_env must be an environment variable NAME (e.g. VULTR_API_KEY), "
                          "never the secret itself")
    fetch = raw.get("fetch") or {}
    if not isinstance(fetch, dict) or set(fetch) - FETCH_KEYS:
        raise ConfigError(f"{where}: 'fetch' may set only {sorted(FETCH_KEYS)}")
    for key, value in fetch.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ConfigError(f"{where}: fetch.{key} must be a number >= 0, got {value!r}")
    return url, auth_env, dict(fetch)


def _check_source(raw: dict, file: Path, settings: dict | None = None) -> Source:
    line = getattr(raw, "line", 0)
    where = f"{file}: line {line}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: each source must be a mapping")
    unknown = set(raw) - SOURCE_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(SOURCE_KEYS)}")
    for key in ("name", "kind", "format"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ConfigError(f"{where}: '{key}' is required and must be text")
    if not is_slug(raw["name"]):
        # The name becomes a folder under landing/ and downloads/: it must be one plain path component.
        raise ConfigError(f"{where}: key 'name': {raw['name']!r} is not a valid source name ({SLUG_RULE})")
    if raw["kind"] not in KINDS:
        raise ConfigError(f"{where}: kind {raw['kind']!r} is not one of {sorted(KINDS)}")
    adapter = ADAPTERS.get(raw["format"])
    if adapter is None:
        raise ConfigError(
            f"{where}: format {raw['format']!r} is not supported; supported: {sorted(ADAPTERS)}"
        )
    if adapter.kind != raw["kind"]:
        raise ConfigError(f"{where}: format {raw['format']!r} holds {adapter.kind}, not {raw['kind']}")
    url, auth_env, fetch = _check_url(raw, where)
    if url is None and not isinstance(raw.get("path"), str):
        raise ConfigError(f"{where}: 'path' (a file or glob relative to {file.name}) or 'url' is required")
    defaults = raw.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise ConfigError(f"{where}: 'defaults' must be a mapping")
    unknown = set(defaults) - DEFAULT_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown default(s) {sorted(unknown)}; allowed: {sorted(DEFAULT_KEYS)}")
    defaults = dict(defaults)
    if defaults.get("observed_at") is not None:
        defaults["observed_at"] = _check_observed_at(defaults["observed_at"], raw["kind"], where)
    # A source's own `max_quote_age_days: null` means no age limit for it, whatever settings say
    # (an undated hypothetical example cannot pass any limit); an absent key inherits settings.
    confirmed = raw.get("perf_confirmed", False)
    if not isinstance(confirmed, bool):
        raise ConfigError(f"{where}: perf_confirmed must be true or false, got {confirmed!r}")
    if confirmed and raw["kind"] != "benchmarks":
        raise ConfigError(f"{where}: perf_confirmed applies to benchmark sources only")
    max_age = _check_age(raw.get("max_quote_age_days"), where)
    if "max_quote_age_days" not in raw:
        max_age = (settings or {}).get("max_quote_age_days")
    return Source(
        name=raw["name"], kind=raw["kind"], format=raw["format"], path=raw.get("path") or "",
        base_dir=file.parent.resolve(), line=line, defaults=defaults,
        max_quote_age_days=max_age, url=url, auth_env=auth_env, fetch=fetch,
        size_limits={**{k: v for k, v in (settings or {}).items() if k in SIZE_LIMIT_KEYS},
                     **_check_size_limits(raw, where)},
        perf_confirmed=confirmed,
    )


def load_sources(file: Path) -> list[Source]:
    """Parse and check sources.yaml; any problem raises ConfigError naming the line."""
    doc = load_yaml_with_lines(file)
    if not isinstance(doc, dict) or not isinstance(doc.get("sources"), list):
        raise ConfigError(f"{file}: expected a top-level 'sources:' list")
    settings = load_settings(doc, file)
    sources = [_check_source(raw, file, settings) for raw in doc["sources"]]
    seen: dict[str, int] = {}
    for s in sources:
        if s.name in seen:
            raise ConfigError(f"{file}: line {s.line}: source name {s.name!r} already used on line {seen[s.name]}")
        seen[s.name] = s.line
    declared = tuple(sorted({(str(name), str(s.defaults["model_id"]).strip().lower())
                             for s in sources if s.format == "model-config" and s.defaults.get("model_id")
                             for name in (s.defaults["model_id"], s.defaults.get("hf_repo_id")) if name}))
    return [replace(s, declared_models=declared) if declared and s.kind == "benchmarks" else s for s in sources]
