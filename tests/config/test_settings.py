"""The environment knobs go through one Settings object, read when used: a change after import counts."""
import re
from pathlib import Path

import pytest

from provider_eval import paths, warehouse
from provider_eval.errors import ConfigError
from provider_eval.settings import Settings, env_name, get_settings

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_the_warehouse_setting_is_read_when_used(monkeypatch, tmp_path):
    monkeypatch.delenv("PROVIDER_EVAL_WAREHOUSE", raising=False)
    default = paths.default_warehouse()
    assert default.is_absolute() and default.name == "provider_eval.duckdb"
    assert paths.DEFAULT_WAREHOUSE == default
    monkeypatch.setenv("PROVIDER_EVAL_WAREHOUSE", str(tmp_path / "elsewhere.duckdb"))
    assert paths.default_warehouse() == paths.DEFAULT_WAREHOUSE == tmp_path / "elsewhere.duckdb"
    monkeypatch.setenv("PROVIDER_EVAL_WAREHOUSE", "")  # empty is unset, as before
    assert paths.default_warehouse() == default


def test_a_command_uses_the_warehouse_the_environment_names_when_it_runs(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from provider_eval.cli import app  # imported before the variable is set
    from provider_eval.errors import WarehouseMissing

    monkeypatch.setenv("PROVIDER_EVAL_WAREHOUSE", str(tmp_path / "later.duckdb"))
    result = CliRunner().invoke(app, ["sql", "select 1"])
    assert isinstance(result.exception, WarehouseMissing) and str(tmp_path / "later.duckdb") in str(result.exception)


def test_a_bad_knob_fails_only_what_uses_it(monkeypatch):
    monkeypatch.setenv("PROVIDER_EVAL_BUILD_MEMORY_LIMIT", "lots")
    monkeypatch.delenv("PROVIDER_EVAL_WAREHOUSE", raising=False)
    assert paths.default_warehouse().name == "provider_eval.duckdb"  # `rank` does not build: unaffected
    with pytest.raises(ConfigError, match="PROVIDER_EVAL_BUILD_MEMORY_LIMIT='lots'"):
        get_settings("build_memory_limit")


def test_a_checkout_keeps_its_warehouse_in_the_checkout(monkeypatch):
    monkeypatch.delenv("PROVIDER_EVAL_WAREHOUSE", raising=False)
    assert not paths.INSTALLED  # the tests run from the source tree
    assert paths.default_warehouse() == paths.PROJECT_ROOT / "warehouse" / "provider_eval.duckdb"


def test_the_build_memory_limit_reaches_the_build_connection(monkeypatch, tmp_path):
    monkeypatch.setenv("PROVIDER_EVAL_BUILD_MEMORY_LIMIT", "256MiB")
    assert warehouse.BUILD_MEMORY_LIMIT == "256MiB"
    with warehouse.connect_build(tmp_path / "w.duckdb", tmp_path / "spill") as con:
        assert con.execute("select current_setting('memory_limit')").fetchall() == [("256.0 MiB",)]
    monkeypatch.delenv("PROVIDER_EVAL_BUILD_MEMORY_LIMIT")
    assert get_settings().build_memory_limit == "1GB"


@pytest.mark.parametrize("name, value, words", [
    ("PROVIDER_EVAL_STAGE_PROCESSES", "sometimes", "must be auto, 1 (always) or 0 (never)"),
    ("PROVIDER_EVAL_KEEP_PREVIOUS_WAREHOUSE", "maybe", "must be 1 (yes) or 0 (no)"),
    ("PROVIDER_EVAL_BUILD_MEMORY_LIMIT", "1GB'; drop table x; --", "must be a DuckDB memory limit"),
    ("PROVIDER_EVAL_BUILD_MEMORY_LIMIT", "lots", "must be a DuckDB memory limit"),
])
def test_a_bad_value_is_a_config_error_naming_the_variable(monkeypatch, name, value, words):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as err:
        get_settings()
    assert str(err.value).startswith(f"environment: {name}={value!r}: ") and words in str(err.value)
    assert err.value.exit_code == 2


@pytest.mark.parametrize("value, kept", [("", True), ("yes", True), ("1", True), ("off", False), ("0", False)])
def test_keep_previous_warehouse_reads_yes_or_no(monkeypatch, value, kept):
    monkeypatch.setenv("PROVIDER_EVAL_KEEP_PREVIOUS_WAREHOUSE", value)
    assert get_settings("keep_previous_warehouse").keep_previous_warehouse is kept


def test_every_setting_is_documented_with_its_default():
    text = DOC.read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(PROVIDER_EVAL_[A-Z_]+)` \| ([^|]+) \|", text, flags=re.M))
    assert set(rows) >= {env_name(field) for field in Settings.model_fields}
    for field, info in Settings.model_fields.items():
        # A yes/no setting is shown the way one is written: 1 or 0.
        default = int(info.default) if isinstance(info.default, bool) else info.default
        shown = "unset" if default is None else f"`{default}`"
        assert rows[env_name(field)].strip() == shown, field
