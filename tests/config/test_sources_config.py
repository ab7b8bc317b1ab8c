"""sources.yaml and workloads.yaml: mistakes are errors that name the file and the line."""
import pytest

from flows.ingest.sources import load_sources
from flows.ingest.workloads import load_workloads
from provider_eval.errors import ConfigError
from provider_eval.paths import DEFAULT_SOURCES, DEFAULT_WORKLOADS


def _write(tmp_path, text, name="sources.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_bundled_sources_and_workloads_are_valid():
    names = [s.name for s in load_sources(DEFAULT_SOURCES)]
    assert "seed-000-example" in names and len(names) == len(set(names))
    assert "seed-000-same-task" in load_workloads(DEFAULT_WORKLOADS)["workload_id"].to_list()


@pytest.mark.parametrize("body, message", [
    ("sources:\n  - name: a\n    kind: quotes\n    format: quote-csv\n    path: x.csv\n    colour: red\n",
     "line 2: unknown key(s) ['colour']"),
    ("sources:\n  - name: a\n    kind: quotes\n    format: excel-sheet\n    path: x.csv\n",
     "line 2: format 'excel-sheet' is not supported"),
    ("sources:\n  - name: a\n    kind: benchmarks\n    format: quote-csv\n    path: x.csv\n",
     "line 2: format 'quote-csv' holds quotes, not benchmarks"),
    ("sources:\n  - name: a\n    kind: quotes\n    format: quote-csv\n    path: x.csv\n    defaults: {colour: red}\n",
     "line 2: unknown default(s) ['colour']"),
    ("sources:\n  - name: a\n    kind: quotes\n    format: quote-csv\n    path: x.csv\n"
     "  - name: a\n    kind: quotes\n    format: quote-csv\n    path: y.csv\n",
     "line 6: source name 'a' already used on line 2"),
    ("sources:\n  - name: a\n    kind: quotes\n    format: quote-csv\n", "line 2: 'path'"),
    ("sources: [\n", "invalid YAML"),
    ("sources:\n  - name: a\n    name: b\n", "line 3: duplicate key 'name'"),
])
def test_source_mistakes_name_the_line(tmp_path, body, message):
    with pytest.raises(ConfigError) as err:
        load_sources(_write(tmp_path, body))
    assert message in str(err.value)
    assert "sources.yaml" in str(err.value)


def test_globs_resolve_relative_to_the_sources_file(tmp_path):
    (tmp_path / "q").mkdir()
    for name in ("b.csv", "a.csv", "notes.txt"):
        (tmp_path / "q" / name).write_text("x")
    [source] = load_sources(_write(tmp_path, "sources:\n  - {name: s, kind: quotes, format: quote-csv, path: 'q/*.csv'}\n"))
    assert [p.name for p in source.files()] == ["a.csv", "b.csv"]


@pytest.mark.parametrize("body, message", [
    ("workloads:\n  - {id: w, kind: batch_job, unit: jobs}\n", "line 2: 'quantity' is required"),
    ("workloads:\n  - {id: w, kind: batch_job, unit: jobs, quantity: -1}\n", "line 2: quantity"),
    ("workloads:\n  - {id: w, kind: picnic, unit: jobs, quantity: 1}\n", "line 2: kind 'picnic'"),
    ("workloads:\n  - {id: w, kind: batch_job, unit: jobs, quantity: nan}\n", "not finite"),
    ("workloads:\n  - {id: w, kind: batch_job, unit: jobs, quantity: 1}\n"
     "  - {id: w, kind: batch_job, unit: jobs, quantity: 2}\n", "workload_id 'w'"),
    ("workloads: []\n", "non-empty"),
])
def test_workload_mistakes_name_the_line(tmp_path, body, message):
    with pytest.raises(ConfigError) as err:
        load_workloads(_write(tmp_path, body, "workloads.yaml"))
    assert message in str(err.value)


@pytest.mark.parametrize("name", ["../../x", "..", ".", "/etc/cron.d/x", "a/b", "a\\\\b", ".hidden", "-rf", "UPPER",
                                  "x" * 65, "caf\u00e9", "a b"])
def test_source_names_must_be_a_slug(tmp_path, name):
    body = f"sources:\n  - name: {name}\n    kind: quotes\n    format: quote-csv\n    path: x.csv\n"
    with pytest.raises(ConfigError, match=r"sources.yaml: line 2: key 'name': .* is not a valid source name"):
        load_sources(_write(tmp_path, body))


def test_a_path_from_input_never_leaves_its_root(tmp_path):
    import datetime as dt

    from flows.ingest.land import land_file
    from provider_eval.errors import UnsafePath
    from provider_eval.safe_paths import child

    root = tmp_path / "landing"
    root.mkdir()
    assert child(root, "quotes", "abc.csv") == root / "quotes" / "abc.csv"
    for parts in (("..", "x"), ("../../x",), ("/etc",), ("a/../../b",), ("",), ("a\0b",)):
        with pytest.raises(UnsafePath):
            child(root, *parts)
    (root / "escape").symlink_to(tmp_path, target_is_directory=True)  # a link planted inside the root
    with pytest.raises(UnsafePath, match="resolves outside"):
        child(root, "escape", "x")
    # The landing step itself refuses, even when called without sources.yaml's check.
    src = tmp_path / "q.csv"
    src.write_text("a\n1\n")
    with pytest.raises(UnsafePath):
        land_file("../../outside", src, root, dt.datetime.now(dt.timezone.utc))
    assert not list(tmp_path.parent.glob("outside*")) and not (tmp_path / "outside").exists()
