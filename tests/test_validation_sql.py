"""The SQL verdict (int_validation_checks / int_validation_verdicts) on real probe output from the fake hosts.

Each scenario runs the real probe script against a fake host built from captured tool outputs, records
the validation as validate-host does, lands it through the probe-json adapter and decides it in SQL
(provider_eval.validation_sql, the models the refresh builds). The SQL must reach the verdict and the
per-check outcomes that validate-host's Python rules reached on the same document.
"""
import datetime as dt
import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from flows.ingest.adapters import probe_json
from flows.ingest.adapters.base import FileContext
from flows.probe import evidence, probe, sanitise, verdict
from provider_eval import validation_sql
from tests import fake_host

PROBE = Path(probe.__file__)
# The checks decided in SQL (the rest are carried from the record).
SQL_CHECKS = {"gpu_model", "gpu_count", "vram", "rocm", "links", "gemm_bf16_8192", "hbm_copy"}


def probe_stdout(env: dict) -> str:
    done = subprocess.run([sys.executable, str(PROBE), "--no-bench"], env=fake_host.env_for(env),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def record(folder: Path, stdout: str, model: str, count: int, virtualisation: str | None = None) -> tuple[Path, dict]:
    """An evidence record as validate-host writes it (same schema, Python verdict), and its path."""
    quote = {"offer_id": f"o-{model}-{count}", "provider": "p", "gpu_model": model, "gpus_per_node": count,
             "virtualisation": virtualisation}
    doc, problems = sanitise.parse_probe_output(stdout)
    decided = verdict.decide(doc, quote, verdict.Reference.load(), [], problems)
    sha = evidence.store_raw_probe(folder, stdout.encode())
    at = dt.datetime(2026, 11, 30, 12, tzinfo=dt.timezone.utc).isoformat()
    rec = {"schema_version": evidence.EVIDENCE_SCHEMA, "validation_id": evidence.validation_id("h", 22, quote["offer_id"], at, sha),
           "host": "h", "port": 22, "user": "u", "offer_id": quote["offer_id"], "provider": "p",
           "quoted_gpu_model": model, "quoted_gpu_count": count, "quoted_virtualisation": virtualisation,
           "verdict": decided.verdict,
           "reasons": [r.text() for r in decided.reasons], "checks": [asdict(r) for r in decided.reasons],
           "measured": decided.measured, "findings": [f["code"] for f in (doc or {}).get("findings") or []],
           "validated_at": at, "host_key_fingerprint": "SHA256:x", "probe_sha256": sha,
           "probe_schema_version": (doc or {}).get("schema_version"), "remote_exit_status": 0, "workload": None}
    return evidence.write_record(folder, rec), rec


SCENARIOS = {
    "mi300x-x8-as-quoted": (lambda root: fake_host.mi300x_host(root), "MI300X", 8, "pass"),
    "six-gpus-quoted-as-eight": (lambda root: fake_host.mi300x_host(root, count=6), "MI300X", 8, "fail"),
    "mi325x-quoted-as-mi300x": (lambda root: fake_host.mi300x_host(root, count=1, device_id="0x74a5"), "MI300X", 1, "fail"),
    "mi300x-quoted-as-mi325x": (lambda root: fake_host.mi300x_host(root, count=1), "MI325X", 1, "fail"),
    "virtual-function": (lambda root: fake_host.mi300x_host(root, count=1, device_id="0x74b5"), "MI300X", 1, None),
    "cpx-nps4": (lambda root: fake_host.cpx_host(root), "MI300X", 1, "inconclusive"),
    "h100-sxm-x8": (lambda root: fake_host.nvidia_host(root), "H100 SXM", 8, "pass"),
    "h100-quoted-as-mi300x": (lambda root: fake_host.nvidia_host(root), "MI300X", 8, "fail"),
    "h100-ecc-errors": (lambda root: fake_host.nvidia_host(root, ecc_uncorrected=3), "H100 SXM", 8, "fail"),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_sql_verdict_agrees_with_the_recorded_one(name, tmp_path):
    build, model, count, expected = SCENARIOS[name]
    path, rec = record(tmp_path / "validations", probe_stdout(build(tmp_path / "host")), model, count)
    got = validation_sql.decide(path)
    if expected:
        assert rec["verdict"] == expected, rec["reasons"]
    assert got.verdict == rec["verdict"], (got.reasons, rec["reasons"])
    decided = {(c["check_name"], c["status"], c["message"]) for c in got.checks if c["check_name"] in SQL_CHECKS
               or c["check_name"].startswith("finding ")}
    python = {(c["check"], c["status"], c["message"]) for c in rec["checks"] if c["check"] in SQL_CHECKS
              or c["check"].startswith("finding ")}
    assert decided == python
    # Every SQL-decided check names its rule's source; the carried ones say they were recorded.
    assert all(c["source_of_rule"] for c in got.checks)
    assert sorted(got.reasons) == sorted(rec["reasons"])


def test_a_record_without_its_probe_output_is_decided_from_what_was_recorded(tmp_path):
    path, rec = record(tmp_path / "validations", probe_stdout(fake_host.mi300x_host(tmp_path / "host", count=6)), "MI300X", 8)
    (tmp_path / "validations" / "probes" / f"{rec['probe_sha256']}.json").unlink()
    got = validation_sql.decide(path)
    # No probe facts to decide on: the recorded checks stand as recorded, each saying so.
    assert got.verdict == rec["verdict"] == "fail" and sorted(got.reasons) == sorted(rec["reasons"])
    assert {c["source_of_rule"] for c in got.checks} == {"recorded by validate-host (flows/probe/verdict.py, flows/probe/validate.py)"}


def test_bad_records_are_one_quarantined_row_each_with_every_bad_field(tmp_path):
    folder = tmp_path / "validations"
    path, rec = record(folder, probe_stdout(fake_host.mi300x_host(tmp_path / "host", count=1)), "MI300X", 1)
    bad = folder / "val-bad.json"
    bad.write_text(json.dumps({**rec, "validated_at": "yesterday", "quoted_gpu_count": "eight", "port": 1e400,
                               "verdict": "maybe"}))
    cases = {"val-bad.json": {"validated_at", "quoted_gpu_count", "port", "verdict"}}
    for name, text in (("val-text.json", "{not json"), ("val-list.json", "[1, 2]"), ("val-deep.json", "[" * 100000)):
        (folder / name).write_text(text)
    for file in sorted(folder.glob("val-*.json")):
        ctx = FileContext(path=file, source_name="hardware-validations", original_name=file.name, file_sha256="0" * 64,
                          first_seen_at="", defaults={}, original_path=str(file),
                          companions={str(p): str(p) for p in probe_json.companion_probe(file)})
        result = probe_json.parse(ctx)
        assert result.rows_in == 1 and result.accepted.height + result.quarantined.height == 1
        if file == path:
            assert result.accepted.height == 1 and result.details["validation_gpus"].height == 1
            continue
        assert result.quarantined["reason_code"].to_list() == ["EVIDENCE_INVALID"], file.name
        detail = result.quarantined["detail"][0]
        for field in cases.get(file.name, ()):
            assert f"{field}:" in detail, detail


@pytest.mark.parametrize("device_id, stated, expected", [
    ("0x74b5", "bare_metal", ("fail", "quote says bare metal; 1 of 1 GPU(s) are SR-IOV virtual functions (PCI 0x74b5)")),
    ("0x74a1", "bare_metal", ("pass", "no GPU is an SR-IOV virtual function, as a bare-metal quote implies")),
    ("0x74b5", "passthrough", None),  # a VM: the SRIOV_VF finding stays a note
    ("0x74b5", None, None),
])
def test_a_virtual_function_sold_as_bare_metal_fails(tmp_path, device_id, stated, expected):
    stdout = probe_stdout(fake_host.mi300x_host(tmp_path / "host", count=1, device_id=device_id))
    path, rec = record(tmp_path / "validations", stdout, "MI300X", 1, virtualisation=stated)
    got = validation_sql.decide(path)
    checks = {c["check_name"]: c for c in got.checks}
    if expected is None:
        assert "virtualisation" not in checks and got.verdict == rec["verdict"]
        return
    assert (checks["virtualisation"]["status"], checks["virtualisation"]["message"]) == expected
    assert checks["virtualisation"]["source_of_rule"].startswith("the quote (offers.virtualisation); gpus.csv")
    # The Python rules never knew the quote's virtualisation: here the SQL decides more than was recorded.
    assert got.verdict == ("fail" if expected[0] == "fail" else rec["verdict"])


FIXTURES = Path(__file__).parent / "fixtures" / "probe_outputs"


def test_pytorch_seeing_fewer_gpus_than_the_tools_is_inconclusive(tmp_path):
    # An 8 x MI300X node (amd-smi, captured values) whose PyTorch sees 2 devices: capture (3) of
    # pytorch_device_reporting_MI300X.txt, torch 2.3.0 in a container given 2 MI300X (hip not reported there).
    capture = (FIXTURES / "pytorch_device_reporting_MI300X.txt").read_text(encoding="utf-8")
    assert "Version: 2.3.0a0+gitd2f9472\nDevices: 2\n" in capture
    devices = [{"index": i, "name": "AMD Instinct MI300X", "gcn_arch_name": "gfx942:sramecc+:xnack-",
                "total_memory_bytes": 196592 * 2**20} for i in range(2)]
    doc = json.loads(probe_stdout(fake_host.mi300x_host(tmp_path / "host")))
    doc["torch"] = {**doc["torch"], "importable": True, "version": "2.3.0a0+gitd2f9472", "hip": None, "cuda": None,
                    "available": True, "device_count": 2, "devices": devices}
    path, rec = record(tmp_path / "validations", json.dumps(doc), "MI300X", 8)
    got = validation_sql.decide(path)
    visible = [c for c in got.checks if c["check_name"] == "visible_gpus"]
    assert [(c["status"], c["message"]) for c in visible] == [
        ("inconclusive", "PyTorch (torch 2.3.0a0+gitd2f9472) sees 2 of the 8 device(s) amd-smi lists")]
    assert (visible[0]["measured"], visible[0]["expected"]) == ("2", "8")
    assert got.verdict == "inconclusive" and rec["verdict"] == "pass"  # the Python rules had no such check
