"""The report's rendered charts are kept per spec: the same chart is drawn once, a changed one again,
a damaged entry is replaced, the folder stays bounded, and a cache that cannot be written costs nothing."""
import os

import altair as alt
import pandas as pd
import pytest

from provider_eval import chart_cache, charts


@pytest.fixture
def renders(monkeypatch, tmp_path):
    """A private cache folder, and a list of the specs vl-convert really rendered."""
    monkeypatch.setenv("PROVIDER_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    seen = []
    real = charts._render

    def counted(spec: str) -> str:
        seen.append(spec)
        return real(spec)

    monkeypatch.setattr(charts, "_render", counted)
    return seen


def _bars(prices: list[float]) -> alt.Chart:
    frame = pd.DataFrame({"configuration": [f"c{i}" for i in range(len(prices))], "rank": range(1, len(prices) + 1),
                          "offer_id": "o", "cost_per_unit_usd": prices, "total_cost_usd": prices, "hours_billed": 1.0})
    return charts.cost_bars(frame, "jobs")


def test_the_same_chart_is_rendered_once(renders):
    first = charts.to_svg(_bars([1.0, 2.0]))
    again = charts.to_svg(_bars([1.0, 2.0]))
    assert first == again and first.startswith("<svg") and "c1" in first
    assert len(renders) == 1
    assert [p.suffix for p in chart_cache.folder().iterdir()] == [".svg"]


def test_a_changed_chart_is_rendered_again(renders):
    cheap, dear = charts.to_svg(_bars([1.0, 2.0])), charts.to_svg(_bars([1.0, 9.5]))
    assert cheap != dear and "9.50" in dear and "9.50" not in cheap
    assert len(renders) == 2 and len(list(chart_cache.folder().glob("*.svg"))) == 2


def test_a_damaged_entry_is_rendered_again_and_replaced(renders):
    whole = charts.to_svg(_bars([3.0]))
    (entry,) = chart_cache.folder().glob("*.svg")
    entry.write_text(whole[: len(whole) // 2], encoding="utf-8")  # e.g. a disk that filled up mid-write
    assert charts.to_svg(_bars([3.0])) == whole
    assert len(renders) == 2 and entry.read_text(encoding="utf-8") == whole


def test_the_least_recently_used_entries_go_beyond_the_limit(renders, monkeypatch):
    monkeypatch.setattr(chart_cache, "MAX_ENTRIES", 3)
    specs = [_bars([float(i)]) for i in range(1, 5)]
    for i, chart in enumerate(specs[:3]):
        charts.to_svg(chart)
        for n, path in enumerate(sorted(chart_cache.folder().glob("*.svg"), key=os.path.getmtime)):
            os.utime(path, ns=(n, n))  # a distinct age each, oldest first, whatever the clock's resolution
    charts.to_svg(specs[0])  # read: now the most recently used
    charts.to_svg(specs[3])  # a fourth: the least recently used (the second) goes
    assert len(renders) == 4 and len(list(chart_cache.folder().glob("*.svg"))) == 3
    charts.to_svg(specs[0]), charts.to_svg(specs[2])
    assert len(renders) == 4
    charts.to_svg(specs[1])
    assert len(renders) == 5


def test_a_cache_folder_that_cannot_be_written_still_renders(renders, monkeypatch, tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be", encoding="utf-8")
    monkeypatch.setenv("PROVIDER_EVAL_CACHE_DIR", str(blocked))
    assert charts.to_svg(_bars([1.0])).startswith("<svg")
    assert charts.to_svg(_bars([1.0])).startswith("<svg")
    assert len(renders) == 2 and blocked.read_text(encoding="utf-8").startswith("a file")
