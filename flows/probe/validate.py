"""Validate one rented host against one quote: probe over SSH, decide, record the evidence."""
import datetime as dt
import json
from dataclasses import asdict
from pathlib import Path

from flows.probe import evidence, ssh_runner, verdict
from flows.probe.probe import json_documents
from provider_eval import warehouse
from provider_eval.errors import ProviderEvalError


class OfferNotFound(ProviderEvalError):
    """The offer id is not in the published warehouse's offers."""


def lookup_quote(warehouse_path: Path, offer_id: str) -> dict:
    """The quoted GPU model and count of an offer, from the published warehouse (parameterised query)."""
    with warehouse.connect_published(Path(warehouse_path)) as con:
        rows = con.execute(
            "select distinct provider, gpu_model, gpus_per_node from offers where offer_id = ? order by all",
            [offer_id]).fetchall()
    if not rows:
        raise OfferNotFound(f"no offer {offer_id!r} in {warehouse_path}; see: provider-eval sql \"select offer_id from offers\"")
    if len({(r[1], r[2]) for r in rows}) > 1:
        raise OfferNotFound(f"offer {offer_id!r} is quoted with different GPUs by {len(rows)} providers; cannot validate")
    provider, gpu_model, gpus_per_node = rows[0]
    return {"offer_id": offer_id, "provider": provider, "gpu_model": gpu_model, "gpus_per_node": int(gpus_per_node)}


def parse_probe_output(stdout: str) -> dict | None:
    """The last JSON object the probe printed (anything before it is ignored), or None."""
    docs = [d for d in json_documents(stdout) if isinstance(d, dict)]
    return docs[-1] if docs else None


def validate_host(host: str, offer_id: str, user: str, port: int, identity_file: Path, known_hosts: Path,
                  warehouse_path: Path, timeout_s: float = 300, connect_timeout_s: float = 10,
                  bench: bool = True, reference: verdict.Reference | None = None, deep: bool = False) -> dict:
    """Run the whole validation and return the evidence record (also written under the warehouse)."""
    # Allow-list first: nothing is looked up, built or sent for a target that fails it.
    target = ssh_runner.validate_target(host, port, user, identity_file, known_hosts)
    quote = lookup_quote(warehouse_path, offer_id)
    result = ssh_runner.run_probe(target, connect_timeout_s=connect_timeout_s, command_timeout_s=timeout_s,
                                  bench=bench, deep=deep)
    problems = []
    if result.timed_out:
        problems.append(f"the probe did not finish within {timeout_s:g} s; the session was closed")
    if result.truncated:
        problems.append(f"the probe printed more than {ssh_runner.MAX_OUTPUT_BYTES} bytes; output was cut")
    if result.exit_status not in (0, None):
        problems.append(f"the remote command exited with status {result.exit_status}: "
                        + verdict.printable(result.stderr.strip()[-300:]))
    probe = parse_probe_output(result.stdout) if not (result.timed_out or result.truncated) else None
    decided = verdict.decide(probe, quote, reference or verdict.Reference.load(), problems)

    directory = evidence.validations_dir(warehouse_path)
    probe_sha = evidence.store_raw_probe(directory, result.stdout.encode())
    validated_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    record = {
        "schema_version": evidence.EVIDENCE_SCHEMA,
        "validation_id": evidence.validation_id(host, port, offer_id, validated_at, probe_sha),
        "host": host, "port": port, "user": user,
        "offer_id": offer_id, "provider": quote["provider"],
        "quoted_gpu_model": quote["gpu_model"], "quoted_gpu_count": quote["gpus_per_node"],
        "verdict": decided.verdict,
        "reasons": [r.text() for r in decided.reasons],
        "checks": [asdict(r) for r in decided.reasons],
        "measured": decided.measured,
        "findings": [f["code"] for f in (probe or {}).get("findings") or []],
        "validated_at": validated_at,
        "host_key_fingerprint": result.host_key_fingerprint,
        "probe_sha256": probe_sha,
        "probe_schema_version": (probe or {}).get("schema_version"),
        "remote_exit_status": result.exit_status,
    }
    record["evidence_path"] = str(evidence.write_record(directory, record))
    return record


def summary_json(record: dict) -> str:
    """The record as the CLI prints it with --format json."""
    return json.dumps(record, indent=2, sort_keys=True, default=str)
