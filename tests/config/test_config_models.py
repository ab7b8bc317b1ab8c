"""sources.yaml and workloads.yaml through their pydantic models: every problem named by file, line and key."""
import pytest

from flows.ingest.sources import SourcesFile, load_sources
from flows.ingest.workloads import WorkloadsFile, load_workloads
from provider_eval.errors import ConfigError

SOURCE = "  - name: {name}\n    kind: quotes\n    format: quote-csv\n    path: x.csv\n"
WORKLOAD = "  - id: {id}\n    kind: inference\n    unit: requests\n    quantity: 1\n"


def _error(tmp_path, loader, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        loader(path)
    message = str(err.value)
    assert message.startswith(f"{path}: ") and message.count(str(path)) == 1, message
    return message[len(str(path)) + 2:]


def test_every_problem_of_a_file_is_named_at_once_by_line(tmp_path):
    text = ("sources:\n" + SOURCE.format(name="a").replace("quotes", "tea")
            + SOURCE.format(name="b") + "    max_line_chars: 0\n    perf_confirmed: 'yes'\n")
    assert _error(tmp_path, load_sources, "sources.yaml", text) == (
        "line 2: kind 'tea' is not one of ['benchmarks', 'models', 'quotes']; "
        "line 6: max_line_chars must be a whole number > 0, got 0; perf_confirmed must be true or false, got 'yes'")


def test_a_list_item_that_is_not_a_mapping_names_its_own_line(tmp_path):
    text = "sources:\n" + SOURCE.format(name="a") + "  - just-a-name\n"
    assert _error(tmp_path, load_sources, "sources.yaml", text) == "line 6: each source must be a mapping"
    text = "workloads:\n" + WORKLOAD.format(id="w") + "  - 3\n"
    assert _error(tmp_path, load_workloads, "workloads.yaml", text) == "line 6: each workload must be a mapping"


def test_nested_keys_are_named_by_their_path_on_the_entry_line(tmp_path):
    text = "sources:\n" + SOURCE.format(name="a").replace("path: x.csv", "url: https://example.com/p.json") \
        + "    fetch:\n      attempts: many\n      retries: 3\n"
    assert _error(tmp_path, load_sources, "sources.yaml", text) == (
        "line 2: 'fetch' may set only ['attempts', 'backoff_s', 'deadline_s', 'max_bytes', 'max_retry_after_s', "
        "'timeout_s'], not ['retries']")
    text = "workloads:\n" + WORKLOAD.format(id="w") + "    slo:\n      ttft_p99_ms: 0\n      tpot_p99_ms: 40\n"
    assert _error(tmp_path, load_workloads, "workloads.yaml", text) == (
        "line 2: slo.ttft_p99_ms 0 must be a positive number of milliseconds")


def test_an_unknown_top_level_key_is_an_error_not_ignored(tmp_path):
    """A misspelt `setting:` used to be skipped silently, dropping the age limit it meant to set."""
    text = "setting:\n  max_quote_age_days: 30\nsources:\n" + SOURCE.format(name="a")
    assert _error(tmp_path, load_sources, "sources.yaml", text) == (
        "line 1: unknown top-level key(s) ['setting']; allowed: ['settings', 'sources']")
    assert set(SourcesFile.model_fields) == {"settings", "sources"}
    assert set(WorkloadsFile.model_fields) == {"workloads"}


def test_a_repeated_workload_id_names_both_lines(tmp_path):
    text = "workloads:\n" + WORKLOAD.format(id="w") + WORKLOAD.format(id="w")
    assert _error(tmp_path, load_workloads, "workloads.yaml", text) == "line 6: workload_id 'w' already used on line 2"


def test_a_secret_in_the_wrong_place_is_never_repeated(tmp_path):
    secret = "sk-live-abc123"
    for extra in (f"    url: https://user:{secret}@example.com/x.json\n",
                  f"    url: https://example.com/x.json\n    auth_env: {secret}\n"):
        text = "sources:\n  - name: a\n    kind: quotes\n    format: vultr-plans\n" + extra
        message = _error(tmp_path, load_sources, "sources.yaml", text)
        assert message.startswith("line 2: ") and secret not in message


def test_a_file_that_is_empty_is_named_once(tmp_path):
    assert _error(tmp_path, load_sources, "sources.yaml", "# nothing yet\n") == "file is empty"


def test_a_source_inherits_settings_and_keeps_its_defaults_as_written(tmp_path):
    text = ("settings: {max_quote_age_days: 30, max_line_chars: 4096}\nsources:\n" + SOURCE.format(name="a")
            + "    max_line_chars: 100\n    defaults: {currency: USD, gpu_count: 8, observed_at: 2025-09-17}\n")
    path = tmp_path / "sources.yaml"
    path.write_text(text, encoding="utf-8")
    (source,) = load_sources(path)
    assert (source.line, source.max_quote_age_days, source.size_limits) == (3, 30, {"max_line_chars": 100})
    assert source.defaults == {"currency": "USD", "gpu_count": 8, "observed_at": "2025-09-17T00:00:00+00:00"}
