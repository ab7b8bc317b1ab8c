"""Caps bound memory in every format (issue 23: a 200 MB single-line JSONL peaked at 3.3 GB).

Each case stages a generated file in a fresh subprocess and reads its peak RSS (getrusage); the
bound is against the same subprocess staging a small file, so it does not depend on the machine
(CI's machine peaks at ~1 GiB just importing the stack, so no absolute cap is asserted).
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from flows.ingest.adapters.file_limits import DEFAULT_MAX_DOCUMENT_BYTES, DEFAULT_MAX_RECORD_BYTES

ROOT = Path(__file__).resolve().parents[2]
MiB = 2**20
# Staging in a fresh process (polars, pandera, the adapters) peaks at a few hundred MiB; parsing the
# big files whole would add ~16x their size (> 1 GiB): the caps must keep the extra far below that.
EXTRA_BOUND = 256 * MiB

STAGE = """
import json, resource, sys, datetime as dt
from pathlib import Path
from flows.ingest.land import land_file
from flows.ingest.stage import stage_file
import polars as pl
path, fmt, work = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
landed = land_file("big", path, work / "landing", dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc))
out = stage_file(landed, fmt, {"gpu_model": "MI300X", "gpu_count": 8}, work / "staged")
q = pl.read_parquet(out.quarantine_parquet).to_dicts() if out.quarantine_parquet else []
print(json.dumps({"status": out.status, "reason": out.reason, "rows_in": out.rows_in,
                  "accepted": out.rows_accepted, "quarantine": [(r["reason_code"], r["detail"]) for r in q],
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

RUN = {"completed": 10, "duration": 5.0, "request_throughput": 2.0, "output_throughput": 100.0,
       "total_throughput": 200.0, "server_info": {"model_path": "meta-llama/Llama-3.1-8B-Instruct", "version": "0.5"}}


def staged(path: Path, fmt: str, tmp_path: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", STAGE, str(path), fmt, str(tmp_path / f"w-{path.name}")],
                          capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def write_big_line(path: Path, size: int, prefix: str = "", end: str = "\n") -> None:
    """A valid JSON object of about `size` bytes on one line (a run with a huge per-request list)."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(prefix)
        fh.write(json.dumps(RUN)[:-1] + ', "ttfts": [')
        chunk = ",".join(["0.123456"] * 100_000)
        for _ in range(size // len(chunk) + 1):
            fh.write(chunk + ",")
        fh.write("0.1]}" + end)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("small")
    small = tmp / "small.jsonl"
    small.write_text(json.dumps(RUN) + "\n")
    got = staged(small, "sglang-serving", tmp)
    assert (got["status"], got["accepted"]) == ("loaded", 1), got
    return got["peak"]


def test_a_huge_single_jsonl_line_is_quarantined_without_being_held(tmp_path, baseline):
    path = tmp_path / "big.jsonl"
    write_big_line(path, 2 * DEFAULT_MAX_RECORD_BYTES, prefix=json.dumps(RUN) + "\n")  # ~64 MiB line after a good one
    got = staged(path, "sglang-serving", tmp_path)
    assert (got["status"], got["rows_in"], got["accepted"]) == ("loaded", 2, 1), got
    [(code, detail)] = got["quarantine"]
    assert code == "LINE_TOO_LONG" and detail.startswith("line 2 is ")
    assert f"over the {DEFAULT_MAX_RECORD_BYTES:,}-byte line cap" in detail
    assert got["peak"] - baseline < EXTRA_BOUND, (got["peak"], baseline)


def test_a_json_document_over_the_cap_is_rejected_before_parsing(tmp_path, baseline):
    path = tmp_path / "big.json"
    write_big_line(path, DEFAULT_MAX_DOCUMENT_BYTES + MiB, end="")
    got = staged(path, "inferencex-agg", tmp_path)
    assert got["status"] == "rejected" and got["reason"].startswith("TOO_LARGE: big.json is ")
    assert "parsed whole" in got["reason"]
    assert got["peak"] - baseline < EXTRA_BOUND


def test_a_big_vllm_result_is_read_as_capped_lines(tmp_path, baseline):
    # vllm-serve: too big to parse whole, so read as --append-result lines; the one huge line is named.
    path = tmp_path / "big.json"
    write_big_line(path, DEFAULT_MAX_DOCUMENT_BYTES + MiB)
    got = staged(path, "vllm-serve", tmp_path)
    assert (got["status"], got["rows_in"]) == ("loaded", 1), got
    assert [c for c, _ in got["quarantine"]] == ["LINE_TOO_LONG"]
    assert got["peak"] - baseline < EXTRA_BOUND
