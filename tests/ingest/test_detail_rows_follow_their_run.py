"""A run the contract quarantines takes its per-request rows with it: detail rows follow their parent row.

Found at bench default scale: a vllm-serve run quarantined as IMPLAUSIBLE_VALUE by the benchmark_runs
contract still had its requests staged, so the build's requests-belong-to-runs check stopped every refresh."""
import datetime as dt
import json

import polars as pl

from flows.ingest.land import land_file
from flows.ingest.stage import DETAIL_PARENT_KEYS, stage_files
from flows.ingest.adapters import ADAPTERS
from models import CONTRACTS
from tests.benchmark_files import detailed_vllm_result, write_json

NOW = dt.datetime(2026, 1, 15, 12, tzinfo=dt.timezone.utc)


def _stage(tmp_path, fmt, path, defaults=None):
    [out] = stage_files([(land_file("s", path, tmp_path / "landing", NOW), fmt, defaults or {})], tmp_path / "staged")
    assert out.status == "loaded", out.reason
    return out


def test_an_implausible_vllm_run_leaves_no_requests(tmp_path):
    doc = detailed_vllm_result(n_requests=40, n_failed=2)
    doc["output_throughput"] = 1e9  # tokens/s on one MI300X: far above the physical ceiling
    out = _stage(tmp_path, "vllm-serve", write_json(tmp_path / "r.json", doc))
    quarantine = pl.read_parquet(out.quarantine_parquet)
    assert (out.rows_accepted, out.rows_quarantined) == (0, 1)
    assert quarantine["reason_code"].to_list() == ["IMPLAUSIBLE_VALUE"]
    assert pl.read_parquet(out.detail_parquets["benchmark_requests"]).height == 0


def test_the_other_runs_of_the_file_keep_their_requests(tmp_path):
    def line(output_tokens_per_s):
        return {"backend": "sglang", "dataset_name": "random", "num_prompts": 3, "duration": 2.0, "completed": 3,
                "request_throughput": 1.5, "output_throughput": output_tokens_per_s, "total_output_tokens": 12,
                "input_lens": [10, 11, 12], "output_lens": [4, 4, 4], "ttfts": [0.1, 0.2, 0.3],
                "itls": [[0.01] * 3] * 3, "errors": ["", "", ""]}
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(line(x)) for x in (6.0, 1e12, 6.0)) + "\n", encoding="utf-8")
    out = _stage(tmp_path, "sglang-serving", path, {"gpu_model": "MI355X", "gpu_count": 8})
    runs = pl.read_parquet(out.accepted_parquet)
    requests = pl.read_parquet(out.detail_parquets["benchmark_requests"])
    assert (out.rows_accepted, out.rows_quarantined) == (2, 1)
    assert pl.read_parquet(out.quarantine_parquet)["row_number"].to_list() == [2]
    assert sorted(requests["row_number"].unique().to_list()) == sorted(runs["row_number"].to_list()) == [1, 3]
    assert requests.height == 6


def test_every_detail_table_names_the_column_it_hangs_off():
    """A table no adapter emits as its main table is a detail table: it must say how its rows follow their parent."""
    detail_tables = set(CONTRACTS) - {a.table for a in ADAPTERS.values()}
    assert set(DETAIL_PARENT_KEYS) == detail_tables
    for table, key in DETAIL_PARENT_KEYS.items():
        assert key in CONTRACTS[table].to_schema().columns
