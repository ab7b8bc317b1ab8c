"""max_quote_age_days in sources.yaml: a top-level setting, a per-source override, errors that name the line."""
import pytest

from flows.ingest.sources import load_sources
from provider_eval.errors import ConfigError

SOURCE = "  - name: {name}\n    kind: quotes\n    format: quote-csv\n    path: x.csv\n"


def _write(tmp_path, text):
    path = tmp_path / "sources.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_setting_applies_to_every_source_and_a_source_may_override_it(tmp_path):
    text = ("settings:\n  max_quote_age_days: 90\nsources:\n" + SOURCE.format(name="a")
            + SOURCE.format(name="b") + "    max_quote_age_days: 7\n")
    a, b = load_sources(_write(tmp_path, text))
    assert (a.max_quote_age_days, b.max_quote_age_days) == (90, 7)
    # What the adapter receives: the source's defaults plus the setting.
    assert a.adapter_options() == {"max_quote_age_days": 90}


def test_no_setting_means_no_age_limit(tmp_path):
    (a,) = load_sources(_write(tmp_path, "sources:\n" + SOURCE.format(name="a")))
    assert a.max_quote_age_days is None and a.adapter_options() == {}


@pytest.mark.parametrize("text, message", [
    ("settings:\n  max_quote_age_days: -1\nsources:\n" + SOURCE.format(name="a"),
     "line 2: max_quote_age_days must be a whole number of days >= 0, got -1"),
    ("settings:\n  max_quote_age_days: 1.5\nsources:\n" + SOURCE.format(name="a"),
     "max_quote_age_days must be a whole number of days >= 0, got 1.5"),
    ("settings:\n  colour: red\nsources:\n" + SOURCE.format(name="a"), "unknown setting(s) ['colour']"),
    ("sources:\n" + SOURCE.format(name="a") + "    max_quote_age_days: soon\n",
     "line 2: max_quote_age_days must be a whole number of days >= 0, got 'soon'"),
])
def test_bad_settings_name_the_line(tmp_path, text, message):
    with pytest.raises(ConfigError) as err:
        load_sources(_write(tmp_path, text))
    assert message in str(err.value)


def test_bundled_sources_set_an_age_limit():
    from provider_eval.paths import DEFAULT_SOURCES

    assert {s.max_quote_age_days for s in load_sources(DEFAULT_SOURCES) if s.kind == "quotes"} == {730}
