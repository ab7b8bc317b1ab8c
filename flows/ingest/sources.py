"""Read sources.yaml: which inputs exist, their format and the metadata defaults they need."""
import datetime as dt
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, ClassVar
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator, Field, ValidationInfo, model_validator

from flows.ingest.adapters import ADAPTERS
from flows.ingest.config_models import ConfigModel, checked, fail, is_number, is_whole, validate
from flows.ingest.yaml_lines import load_yaml_with_lines
from provider_eval.safe_paths import SLUG_RULE, is_slug

KINDS = ["benchmarks", "models", "quotes"]
ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
# Size caps checked before a file is parsed (bad-input catalogue #41-42); whole numbers > 0.
SIZE_LIMIT_KEYS = ("max_file_bytes", "max_line_chars")

AgeDays = checked(int, lambda v: is_whole(v) and v >= 0, "{key} must be a whole number of days >= 0, got {value}")
SizeCap = checked(int, lambda v: is_whole(v) and v > 0, "{key} must be a whole number > 0, got {value}")
Limit = checked(int | float, lambda v: is_number(v) and v >= 0, "{key} must be a number >= 0, got {value}", none=False)
Text = checked(str, lambda v: isinstance(v, str) and v.strip(), "'{key}' is required and must be text", none=False)
Glob = checked(str, lambda v: isinstance(v, str), "'{key}' must be text (a file or glob), got {value}")
# The name of the variable holding a secret, never the secret (so the message never shows the value).
EnvName = checked(str, lambda v: isinstance(v, str) and ENV_NAME.match(v),
                  "auth_env must be an environment variable NAME (e.g. VULTR_API_KEY), never the secret itself")
Flag = checked(bool, lambda v: isinstance(v, bool), "{key} must be true or false, got {value}", none=False)


def _rule(test, reason: str) -> AfterValidator:
    """An after-validator: a value failing `test` is the error `reason`."""
    def check(value):
        if not test(value):
            fail(reason)
        return value
    return AfterValidator(check)


def _http_url(value):
    """An http(s) address without credentials (secrets never live in sources.yaml)."""
    try:
        parts = urlsplit(value) if isinstance(value, str) else None
    except ValueError:  # e.g. an unclosed IPv6 bracket
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        fail("url must be an http(s) address, got {value}")
    if parts.username or parts.password:
        fail("url must not embed credentials; name an environment variable in 'auth_env'")
    return value


def _utc_stamp(value):
    """A date (midnight UTC) or an ISO time with an offset, not in the future; as ISO UTC text."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = dt.date.fromisoformat(value) if len(value.strip()) == 10 else dt.datetime.fromisoformat(
                value.strip().replace("Z", "+00:00"))
        except ValueError:
            fail("{key} {value} is not a date (2025-09-17) or an ISO-8601 time with an offset (2025-09-17T00:00:00Z)")
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            fail(f"{{key}} {value.isoformat()} has no UTC offset (add Z or +hh:mm)")
        stamp = value.astimezone(dt.timezone.utc)
    elif isinstance(value, dt.date):
        stamp = dt.datetime.combine(value, dt.time(), tzinfo=dt.timezone.utc)
    else:
        fail("{key} {value} is not a date or an ISO-8601 time")
    if stamp > dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1):
        fail(f"{{key}} {stamp.isoformat()} is in the future")
    return stamp.isoformat()


class SourceSettings(ConfigModel):
    """The optional top-level `settings:`: defaults for every source (a source may set each itself)."""

    unknown_keys: ClassVar[str] = "unknown setting(s) {unknown}; allowed: {allowed}"
    max_quote_age_days: AgeDays = None
    max_file_bytes: SizeCap = None
    max_line_chars: SizeCap = None


class Fetch(ConfigModel):
    """A `url:` source's download limits (flows/ingest/fetch.py FetchPolicy); each optional."""

    unknown_keys: ClassVar[str] = "'fetch' may set only {allowed}, not {unknown}"
    timeout_s: Limit = None
    deadline_s: Limit = None
    max_bytes: Limit = None
    attempts: Limit = None
    backoff_s: Limit = None
    max_retry_after_s: Limit = None


class Defaults(ConfigModel):
    """What a source's files do not carry (docs/inputs.md); a file value that contradicts one is quarantined."""

    unknown_keys: ClassVar[str] = "unknown default(s) {unknown}; allowed: {allowed}"
    provider: Any = None
    gpu_model: Any = None
    gpu_count: Any = None
    model_id: Any = None
    precision: Any = None
    engine: Any = None
    engine_version: Any = None
    rocm_version: Any = None
    currency: Any = None
    region: Any = None
    node_count: Any = None
    # When a quote source's undated rows were observed: stored as ISO UTC text.
    observed_at: Annotated[Any, BeforeValidator(_utc_stamp)] = None
    # model-config sources (docs/formats/model-config.md)
    hf_repo_id: Any = None
    source_url: Any = None
    params_total: Any = None
    params_active: Any = None
    rope_scaling: Any = None


class SourceEntry(ConfigModel):
    """One item of `sources:` as written."""

    not_a_mapping: ClassVar[str] = "each source must be a mapping"
    # The name becomes a folder under landing/ and downloads/: it must be one plain path component.
    name: Annotated[Text, _rule(is_slug, "key '{key}': {value} is not a valid source name (" + SLUG_RULE + ")")]
    kind: Annotated[Text, _rule(lambda v: v in KINDS, "{key} {value} is not one of " + str(KINDS))]
    format: Annotated[Text, _rule(lambda v: v in ADAPTERS, "{key} {value} is not supported; supported: "
                                  + str(sorted(ADAPTERS)))]
    path: Glob = None
    # A `url:` source is downloaded at refresh; its API token comes from the environment variable
    # named in auth_env (the name is configuration, the value never is).
    url: Annotated[str | None, BeforeValidator(_http_url)] = None
    auth_env: EnvName = None
    fetch: Fetch | None = None
    description: Any = None
    defaults: Defaults | None = None
    # A source's own `max_quote_age_days: null` means no age limit for it, whatever settings say
    # (an undated hypothetical example cannot pass any limit); an absent key inherits settings.
    max_quote_age_days: AgeDays = None
    max_file_bytes: SizeCap = None
    max_line_chars: SizeCap = None
    # The user confirms this benchmark source's runs are real although far above every published
    # result (PERF_IMPLAUSIBLE, docs/cost-model.md): its runs are ranked again.
    perf_confirmed: Flag = False

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo):
        adapter = ADAPTERS[self.format]
        if adapter.kind != self.kind:
            fail(f"format {self.format!r} holds {adapter.kind}, not {self.kind}")
        given = self.model_fields_set
        if self.url is None:
            for key in ("auth_env", "fetch"):
                if key in given:
                    fail(f"'{key}' applies only to a 'url' source")
            if self.path is None:
                name = Path((info.context or {}).get("file", "sources.yaml")).name
                fail(f"'path' (a file or glob relative to {name}) or 'url' is required")
        elif "path" in given:
            fail("give either 'path' or 'url', not both")
        if self.defaults is not None and self.defaults.observed_at is not None and self.kind != "quotes":
            fail("defaults.observed_at applies to quote sources only")
        if self.perf_confirmed and self.kind != "benchmarks":
            fail("perf_confirmed applies to benchmark sources only")
        return self

    def source(self, file: Path, settings: SourceSettings) -> "Source":
        """The Source this entry declares, with the settings it inherits."""
        given = self.model_fields_set
        limits = {key: getattr(owner, key) for key in SIZE_LIMIT_KEYS for owner in (settings, self)
                  if getattr(owner, key) is not None}  # the source's own cap wins over the setting
        return Source(
            name=self.name, kind=self.kind, format=self.format, path=self.path or "",
            base_dir=file.parent.resolve(), line=self.line,
            defaults=self.defaults.model_dump(exclude_unset=True) if self.defaults else {},
            max_quote_age_days=self.max_quote_age_days if "max_quote_age_days" in given else settings.max_quote_age_days,
            url=self.url, auth_env=self.auth_env,
            fetch=self.fetch.model_dump(exclude_unset=True) if self.fetch else {},
            size_limits=limits, perf_confirmed=self.perf_confirmed,
        )


def _a_list(value):
    if not isinstance(value, list):
        fail("expected a top-level 'sources:' list", line=0)
    return value


class SourcesFile(ConfigModel):
    """sources.yaml: an optional `settings:` and the `sources:` list (names unique)."""

    unknown_keys: ClassVar[str] = "unknown top-level key(s) {unknown}; allowed: {allowed}"
    not_a_mapping: ClassVar[str] = "expected a top-level 'sources:' list"
    settings: SourceSettings | None = None
    sources: Annotated[list[SourceEntry], BeforeValidator(_a_list)] = Field(None, validate_default=True)

    @model_validator(mode="after")
    def _unique_names(self):
        seen: dict[str, int] = {}
        for entry in self.sources:
            if entry.name in seen:
                fail(f"source name {entry.name!r} already used on line {seen[entry.name]}", line=entry.line)
            seen[entry.name] = entry.line
        return self


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
    url: str | None = None
    auth_env: str | None = None
    fetch: dict = field(default_factory=dict)
    # Size caps for this source's files (settings or the source); absent = the adapters' defaults.
    size_limits: dict = field(default_factory=dict)
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


def load_sources(file: Path) -> list[Source]:
    """Parse and check sources.yaml; any problem raises ConfigError naming the file, line and key."""
    config = validate(SourcesFile, load_yaml_with_lines(file), file, context={"file": file})
    settings = config.settings or SourceSettings()
    sources = [entry.source(file, settings) for entry in config.sources]
    declared = tuple(sorted({(str(name), str(s.defaults["model_id"]).strip().lower())
                             for s in sources if s.format == "model-config" and s.defaults.get("model_id")
                             for name in (s.defaults["model_id"], s.defaults.get("hf_repo_id")) if name}))
    return [replace(s, declared_models=declared) if declared and s.kind == "benchmarks" else s for s in sources]
