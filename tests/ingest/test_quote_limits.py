"""Volume and resource abuse (reliability_and_bad_inputs.md §4.4 #41-43): caps checked before parsing.

Big fixtures are generated here (sparse files, repeated text), never committed. Each case names its
expected outcome: F (file rejected with a code) or rows quarantined with a code, rows conserved.
"""
import datetime as dt
import gzip
import json
from pathlib import Path

import polars as pl
import pytest

from flows.ingest.adapters.file_limits import DEFAULT_MAX_LINE_CHARS, MAX_NESTING
from flows.ingest.adapters.quarantine import QUARANTINE_DISTINCT_KEPT
from flows.ingest.land import LandedFile, land_file
from flows.ingest.sources import load_sources
from flows.ingest.stage import stage_file
from provider_eval.errors import ConfigError

NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.timezone.utc)
HEADER = "provider,offer_id,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,billing_model,notes\n"
GOOD = "acme,{id},MI300X,1,2.49,USD,hour,per_gpu,on_demand,{notes}\n"


def stage(path: Path, tmp_path: Path, fmt: str = "quote-csv", defaults: dict | None = None):
    """Land and stage one file; return (outcome, accepted, quarantined)."""
    landed = land_file("limits", path, tmp_path / "landing", NOW)
    out = stage_file(landed, fmt, defaults or {}, tmp_path / "staged")
    if out.status != "loaded":
        return out, None, None
    return out, pl.read_parquet(out.accepted_parquet), pl.read_parquet(out.quarantine_parquet)


def test_a_line_over_the_cap_is_quarantined_and_the_rest_loads(tmp_path):
    """#41: one 5 MB line (over the 64 Ki-character default) → that row LINE_TOO_LONG, others load."""
    path = tmp_path / "long_line.csv"
    path.write_text(HEADER + GOOD.format(id="a", notes="ok")
                    + GOOD.format(id="huge", notes="x" * 5_000_000)
                    + GOOD.format(id="b", notes="ok"), encoding="utf-8")
    out, accepted, quarantined = stage(path, tmp_path)
    assert out.status == "loaded" and out.rows_in == 3
    assert sorted(accepted["offer_id"]) == ["a", "b"]
    (row,) = quarantined.to_dicts()
    assert (row["row_number"], row["reason_code"]) == (2, "LINE_TOO_LONG")
    assert row["detail"] == (f"LINE_TOO_LONG: line 3 is 5,000,051 characters, over max_line_chars "
                             f"{DEFAULT_MAX_LINE_CHARS:,}; its first 200 are in raw_record")
    # The raw record keeps the line's head (readable), not its 5 MB.
    raw = json.loads(row["raw_record"])
    assert raw["_line_head"].startswith("acme,huge,MI300X") and len(row["raw_record"]) < 1000


def test_the_line_cap_is_set_per_source(tmp_path):
    path = tmp_path / "short_cap.csv"
    path.write_text(HEADER + GOOD.format(id="a", notes="short") + GOOD.format(id="b", notes="n" * 200),
                    encoding="utf-8")
    out, accepted, quarantined = stage(path, tmp_path, defaults={"max_line_chars": 120})
    assert accepted["offer_id"].to_list() == ["a"]
    assert quarantined.select("row_number", "reason_code").rows() == [(2, "LINE_TOO_LONG")]


def test_an_over_long_header_rejects_the_file(tmp_path):
    path = tmp_path / "long_header.csv"
    path.write_text(HEADER.rstrip("\n") + "," + "h" * 200 + "\n" + GOOD.format(id="a", notes=""), encoding="utf-8")
    out, _, _ = stage(path, tmp_path, defaults={"max_line_chars": 150})
    assert out.status == "rejected" and out.reason.startswith("LINE_TOO_LONG: the header line is")


def test_a_file_over_the_size_cap_is_rejected_before_it_is_read(tmp_path):
    """#41: a 10 GB CSV (sparse: no bytes written) is rejected by its size, without reading it."""
    path = tmp_path / "ten_gb.csv"
    with open(path, "wb") as fh:
        fh.truncate(10 * 2**30)
    # Landing (hashing and copying 10 GB) is not what is tested: the staged file is the file itself.
    landed = LandedFile(source_name="limits", file_sha256="0" * 64, landed_path=str(path),
                        original_path=str(path), first_seen_at=NOW.isoformat())
    for fmt in ("quote-csv", "quote-yaml", "vultr-plans", "vllm-serve"):
        defaults = {"gpu_count": 8} if fmt == "vllm-serve" else {}
        out = stage_file(landed, fmt, defaults, tmp_path / "staged")
        assert out.status == "rejected", fmt
        assert out.reason == ("TOO_LARGE: ten_gb.csv is 10,737,418,240 bytes; the source's max_file_bytes is "
                              "1,073,741,824 (sources.yaml)"), fmt


def test_the_size_cap_is_set_per_source(tmp_path):
    path = tmp_path / "small.csv"
    path.write_text(HEADER + GOOD.format(id="a", notes="x" * 100), encoding="utf-8")
    out, _, _ = stage(path, tmp_path, defaults={"max_file_bytes": 100})
    assert out.status == "rejected" and out.reason.startswith("TOO_LARGE: small.csv is ")


def test_size_caps_come_from_sources_yaml(tmp_path):
    (tmp_path / "q.csv").write_text(HEADER, encoding="utf-8")
    sources = tmp_path / "sources.yaml"
    sources.write_text(
        "settings: {max_file_bytes: 5000000, max_line_chars: 4096}\n"
        "sources:\n"
        "  - {name: a, kind: quotes, format: quote-csv, path: q.csv}\n"
        "  - {name: b, kind: quotes, format: quote-csv, path: q.csv, max_file_bytes: 1000}\n", encoding="utf-8")
    a, b = load_sources(sources)
    assert a.adapter_options() == {"max_file_bytes": 5000000, "max_line_chars": 4096}
    assert b.adapter_options() == {"max_file_bytes": 1000, "max_line_chars": 4096}
    sources.write_text("sources:\n  - {name: a, kind: quotes, format: quote-csv, path: q.csv, max_line_chars: 0}\n",
                       encoding="utf-8")
    with pytest.raises(ConfigError, match="line 2: max_line_chars must be a whole number > 0, got 0"):
        load_sources(sources)


def test_a_compressed_file_is_never_decompressed(tmp_path):
    """#42: a small .gz expanding to 50 MB is not UTF-8 text: rejected as it is, nothing inflated."""
    path = tmp_path / "bomb.csv.gz"
    path.write_bytes(gzip.compress(b"0" * 50_000_000, compresslevel=9))
    assert path.stat().st_size < 100_000
    out, _, _ = stage(path, tmp_path)
    assert out.status == "rejected" and out.reason.startswith("ENCODING: not UTF-8")


def test_json_nested_10k_levels_is_rejected_before_parsing(tmp_path):
    """#42: 10,000 nested brackets would exhaust the JSON parser's recursion; the depth is counted first."""
    with pytest.raises(RecursionError):  # what the parser would do without the cap
        json.loads("[" * 10_000 + "]" * 10_000)
    path = tmp_path / "deep.json"
    path.write_text('{"plans_metal": ' + "[" * 10_000 + "]" * 10_000 + "}", encoding="utf-8")
    for fmt, defaults in (("vultr-plans", {"provider": "vultr"}), ("vllm-serve", {"gpu_count": 8})):
        out, _, _ = stage(path, tmp_path, fmt=fmt, defaults=defaults)
        assert out.status == "rejected", fmt
        assert out.reason == f"NESTING_TOO_DEEP: deep.json nests more than {MAX_NESTING} levels deep", fmt


def test_brackets_inside_json_strings_do_not_count(tmp_path):
    path = tmp_path / "brackets.json"
    path.write_text(json.dumps({"plans_metal": [], "note": "[" * 1000 + '\\" {{{'}), encoding="utf-8")
    out, _, _ = stage(path, tmp_path, fmt="vultr-plans", defaults={"provider": "vultr"})
    assert out.status == "loaded" and out.rows_in == 0


def test_yaml_nested_10k_levels_is_rejected_before_parsing(tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text("quotes: " + "[" * 10_000 + "]" * 10_000 + "\n", encoding="utf-8")
    out, _, _ = stage(path, tmp_path, fmt="quote-yaml")
    assert out.status == "rejected"
    assert out.reason == f"NESTING_TOO_DEEP: line 1: nested more than {MAX_NESTING} levels deep"


def test_yaml_aliases_are_refused(tmp_path):
    """#42: a "billion laughs" document: nine lines that would expand to 10^9 values."""
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i, (prev, cur) in enumerate(zip("abcdefgh", "bcdefghi")):
        lines.append(f"{cur}: &{cur} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]")
    lines.append("quotes: *i")
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, _, _ = stage(path, tmp_path, fmt="quote-yaml")
    assert out.status == "rejected"
    assert out.reason.startswith("YAML_ALIAS: line 1: anchors and aliases")


def test_a_long_yaml_line_rejects_the_file(tmp_path):
    path = tmp_path / "long.yaml"
    path.write_text("quotes:\n  - provider: acme\n    notes: " + "y" * 300 + "\n", encoding="utf-8")
    out, _, _ = stage(path, tmp_path, fmt="quote-yaml", defaults={"max_line_chars": 200})
    assert out.status == "rejected" and out.reason.startswith("LINE_TOO_LONG: line 3 is 311 characters")


def test_a_flood_of_distinct_unknown_gpu_names_keeps_quarantine_bounded(tmp_path):
    """#43: 20,000 distinct unknown GPU names: every row is counted, only the first 100 kept in full."""
    n = 20_000
    path = tmp_path / "flood.csv"
    path.write_text(HEADER + "".join(
        f"acme,o{i},GPU-{i:06d}-{'z' * 40},1,2.49,USD,hour,per_gpu,on_demand,\n" for i in range(n))
        + GOOD.format(id="real", notes=""), encoding="utf-8")
    out, accepted, quarantined = stage(path, tmp_path)
    # Conservation: one quarantine row per bad input row, none lost, none merged.
    assert (out.rows_in, out.rows_accepted, out.rows_quarantined) == (n + 1, 1, n)
    assert quarantined.height == n and set(quarantined["reason_code"]) == {"GPU_ALIAS_UNKNOWN"}
    full = quarantined.filter(pl.col("raw_record").is_not_null())
    assert full.height == QUARANTINE_DISTINCT_KEPT
    assert full["row_number"].sort().to_list() == list(range(1, QUARANTINE_DISTINCT_KEPT + 1))
    assert "GPU-000000-" in full.sort("row_number")["detail"][0]
    later = quarantined.filter(pl.col("row_number") == n).to_dicts()[0]
    assert later["detail"] == ("GPU_ALIAS_UNKNOWN: value not stored: more than 100 distinct GPU_ALIAS_UNKNOWN "
                               f"values in this file (the row is in the landed file at row {n})")
    # Bounded: the rows past the first 100 carry no value of the input, so their size does not grow with it.
    stored = quarantined.select(pl.col("detail").str.len_bytes().sum() + pl.col("raw_record").str.len_bytes().sum()).item()
    assert stored < QUARANTINE_DISTINCT_KEPT * 2_000 + n * 150


def test_repeated_bad_values_are_kept_in_full(tmp_path):
    """The cap is on distinct values: the same unknown name on 500 rows is one value, kept every time."""
    path = tmp_path / "same.csv"
    path.write_text(HEADER + "".join(f"acme,o{i},H1OO,1,2.49,USD,hour,per_gpu,on_demand,\n" for i in range(500)),
                    encoding="utf-8")
    _, _, quarantined = stage(path, tmp_path)
    assert quarantined.height == 500 and quarantined["raw_record"].null_count() == 0


def test_every_format_bounds_a_flood_the_same_way(tmp_path):
    """#43 beyond quotes: a benchmark run-csv with 300 distinct unknown GPU names is bounded at staging too."""
    n = 300
    path = tmp_path / "runs_flood.csv"
    path.write_text("run_id,provider,gpu_model,gpu_count,workload_id,unit,completed,duration_s\n" + "".join(
        f"r{i},acme,GPU-{i:04d},1,w,jobs,1,3600\n" for i in range(n)), encoding="utf-8")
    out, _, quarantined = stage(path, tmp_path, fmt="run-csv")
    assert (out.rows_in, out.rows_accepted, out.rows_quarantined) == (n, 0, n)
    assert quarantined.filter(pl.col("raw_record").is_not_null()).height == QUARANTINE_DISTINCT_KEPT
    assert quarantined.filter(pl.col("row_number") == n)["detail"][0].startswith(
        "GPU_ALIAS_UNKNOWN: value not stored: more than 100 distinct GPU_ALIAS_UNKNOWN values")
