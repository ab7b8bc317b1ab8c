"""Validate one rented host against one quote: probe over SSH, decide, record the evidence."""
import datetime as dt
import json
from pathlib import Path

from flows.probe import evidence, sanitise, ssh_runner, verdict
from flows.probe import workload as bench_workload
from provider_eval import validation_sql, warehouse
from provider_eval.errors import ProviderEvalError
from provider_eval.exit_codes import ExitCode


class OfferNotFound(ProviderEvalError):
    """The offer id is not in the published warehouse's offers."""

    exit_code = ExitCode.USAGE


def lookup_quote(warehouse_path: Path, offer_id: str) -> dict:
    """The quoted GPU model and count of an offer, from the published warehouse (parameterised query)."""
    with warehouse.connect_published(Path(warehouse_path)) as con:
        rows = con.execute(
            "select distinct provider, gpu_model, gpus_per_node from offers where offer_id = ? order by all",
            [offer_id]).fetchall()
        # How the quote says the GPUs reach the tenant (bare_metal, passthrough, partitioned), when it says one thing.
        stated = con.execute("select distinct virtualisation from offers where offer_id = ? and virtualisation is not null",
                             [offer_id]).fetchall()
    if not rows:
        raise OfferNotFound(f"no offer {offer_id!r} in {warehouse_path}; see: provider-eval sql \"select offer_id from offers\"")
    if len({(r[1], r[2]) for r in rows}) > 1:
        raise OfferNotFound(f"offer {offer_id!r} is quoted with different GPUs by {len(rows)} providers; cannot validate")
    provider, gpu_model, gpus_per_node = rows[0]
    return {"offer_id": offer_id, "provider": provider, "gpu_model": gpu_model, "gpus_per_node": int(gpus_per_node),
            "virtualisation": stated[0][0] if len(stated) == 1 else None}


def validate_host(host: str, offer_id: str, user: str, port: int, identity_file: Path, known_hosts: Path,
                  warehouse_path: Path, timeout_s: float = 300, connect_timeout_s: float = 10,
                  bench: bool = True, deep: bool = False,
                  workload: str | None = None, workload_params: dict | None = None,
                  workload_timeout_s: float = 1800) -> dict:
    """Run the whole validation and return the evidence record (also written under the warehouse).

    The verdict is the warehouse's: the record and its raw probe output are written, then decided by the
    SQL models the refresh builds (provider_eval/validation_sql.py), so the two can never disagree.
    """
    # Allow-list first: nothing is looked up, built or sent for a target that fails it.
    target = ssh_runner.validate_target(host, port, user, identity_file, known_hosts)
    if workload:
        # Check the benchmark request too before anything is sent (the command is built later).
        bench_workload.build_command(workload, workload_params or {}, {}, 1)
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
    # Everything the host sent is cleaned here, once: what follows only sees printable, bounded, finite values.
    probe, _ = (sanitise.parse_probe_output(result.stdout) if not (result.timed_out or result.truncated)
                else (None, []))
    directory = evidence.validations_dir(warehouse_path)
    probe_sha = evidence.store_raw_probe(directory, result.stdout.encode())
    validated_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    record = evidence.new_record(
        evidence.validation_id(host, port, offer_id, validated_at, probe_sha), host, port, user, quote, validated_at,
        probe_sha, probe, problems, [],
        host_key_fingerprint=result.host_key_fingerprint, remote_exit_status=result.exit_status)
    _decide(directory, record)
    if workload:
        record["workload"] = _representative_workload(target, quote, record, directory, workload,
                                                      workload_params or {}, connect_timeout_s, workload_timeout_s)
        _decide(directory, record)
    return record


def _decide(directory: Path, record: dict) -> None:
    """Write the record, decide it with the warehouse's SQL models, and write it again with their verdict."""
    path = evidence.write_record(directory, record)
    decided = validation_sql.decide(path)
    record.update(verdict=decided.verdict, reasons=decided.reasons, evidence_path=str(path),
                  checks=[{"check": c["check_name"], "status": c["status"], "message": c["message"],
                           "measured": c["measured"], "expected": c["expected"], "source_of_rule": c["source_of_rule"]}
                          for c in decided.checks])
    evidence.write_record(directory, record)


def summary_json(record: dict) -> str:
    """The record as the CLI prints it with --format json."""
    return json.dumps(record, indent=2, sort_keys=True, default=str)


def _representative_workload(target: ssh_runner.Target, quote: dict, record: dict, directory: Path, template: str,
                             params: dict, connect_timeout_s: float, timeout_s: float) -> dict:
    """Run the user's benchmark on a host that did not fail; its throughput becomes a measured run for the offer."""
    if record["verdict"] == "fail":
        # The host is not what was quoted: a throughput measured on it must not be credited to the offer.
        return {"template": template, "params": params, "result_path": None, "skipped": True,
                "problem": "not run: the host failed validation"}
    metadata = {"provider": quote["provider"], "gpu_model": quote["gpu_model"],
                "gpu_count": quote["gpus_per_node"], "validation_id": record["validation_id"]}
    ran = bench_workload.run_workload(target, template, params, metadata, connect_timeout_s, timeout_s)
    path = bench_workload.save_result(directory, record["validation_id"], ran)
    return {"template": template, "params": params, "result_path": str(path) if path else None, "skipped": False,
            "problem": verdict.printable(ran.problem) if ran.problem else None, "result_format": ran.result_format}
