"""Decide a probe document the way validate-host does: record it, land it (probe-json) and run the SQL verdict models."""
import datetime as dt
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from flows.probe import evidence, sanitise
from provider_eval import validation_sql


@dataclass(frozen=True)
class Check:
    """One check row of int_validation_checks, named as the tests read it."""

    check: str
    status: str
    message: str
    measured: str | None
    expected: str | None
    source_of_rule: str

    def text(self) -> str:
        """The reason line validate-host prints."""
        return f"{self.status.upper()} {self.check}: {self.message}"


@dataclass(frozen=True)
class Decided:
    """The SQL verdict of one record and its checks."""

    verdict: str
    reasons: list[Check]
    lines: list[str]
    record: dict


def record(folder: Path, stdout: str | bytes | None, quote: dict, transport=(), recorded=(), workload=None,
           at: dt.datetime = dt.datetime(2026, 11, 30, 12, tzinfo=dt.timezone.utc)) -> Path:
    """An evidence record as validate-host writes it before deciding, with its raw probe output; its path."""
    raw = stdout.encode() if isinstance(stdout, str) else (stdout or b"")
    sha = evidence.store_raw_probe(folder, raw)
    doc, _ = sanitise.parse_probe_output(raw.decode("utf-8", "replace"))  # as validate-host reads it
    quote = {"offer_id": "o", "provider": "p", **quote}
    rec = evidence.new_record(evidence.validation_id("h", 22, quote["offer_id"], at.isoformat(), sha), "h", 22, "u",
                              quote, at.isoformat(), sha, doc if isinstance(doc, dict) else None, list(transport),
                              list(recorded), host_key_fingerprint="SHA256:x", remote_exit_status=0, workload=workload)
    return evidence.write_record(folder, rec)


def decide(doc: dict | str | None, quote: dict, transport=(), recorded=(), workload=None) -> Decided:
    """The SQL verdict on one probe document (a dict is printed as the probe prints it)."""
    return decide_all([(doc, quote)], transport, recorded, workload)[0]


def decide_all(cases: list[tuple[dict | str | None, dict]], transport=(), recorded=(), workload=None) -> list[Decided]:
    """The SQL verdict on each (probe document, quote), in order, from one build of the verdict models."""
    with tempfile.TemporaryDirectory() as tmp:
        # Each case its own offer id, so the same document against two quotes is two validations.
        paths = [record(Path(tmp) / "validations", None if doc is None else doc if isinstance(doc, str)
                        else json.dumps(doc, sort_keys=True), {"offer_id": f"o{i}" if i else "o", **quote}, transport, recorded, workload)
                 for i, (doc, quote) in enumerate(cases)]
        decided = validation_sql.decide_many(paths)
        records = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    return [Decided(got.verdict, [Check(c["check_name"], c["status"], c["message"], c["measured"], c["expected"],
                                        c["source_of_rule"]) for c in got.checks], got.reasons, rec)
            for got, rec in zip(decided, records)]


def statuses(result: Decided) -> dict[str, str]:
    """check name → status (the last row of a name wins)."""
    return {r.check: r.status for r in result.reasons}
