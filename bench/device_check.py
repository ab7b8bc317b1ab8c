"""`make device-check`: run the probe on this machine as a validation would; keep its raw output and provenance.

Standard library only (plus the project's own stdlib-only modules), so it runs on a bare GPU machine
with the system Python: no virtualenv, no network. Writes into the folder given (default $OUT, else
./device-check-out):

  probe_stdout.json   the probe's raw stdout, byte for byte (what validate-host stores under probes/)
  probe_stderr.txt    its stderr
  provenance.json     when, where and with what it ran (date UTC, hostname, nvidia-smi banner, driver,
                      CUDA, torch, Python), the command, its duration and the stdout's sha256
  validations/        the run as a validate-host evidence record + its raw probe output (probe-json)
  verdict.json        the SQL verdict on that record (provider_eval/validation_sql.py, the warehouse's
                      models) against the quote given (or the GPUs found) and every reason
  summary.txt         the same verdict as the lines validate-host prints

Exit status (provider_eval/exit_codes.py): 0 pass, 1 fail, 3 inconclusive, including "no GPU found".
"""
import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flows.probe import evidence, sanitise, verdict  # noqa: E402  (stdlib-only modules of this project)
from provider_eval.exit_codes import ExitCode  # noqa: E402

PROBE = ROOT / "flows" / "probe" / "probe.py"
# Well under 5 minutes in all: the probe's own tool and torch deadlines sit inside this one.
PROBE_TIMEOUT_S = 240
TORCH_TIMEOUT_S = 150
NO_GPU = "no GPU found: nvidia-smi, amd-smi, rocm-smi, rocminfo and PyTorch enumerated none"


def output_dir(arg: str | None) -> Path:
    """The folder given, else $OUT (the device machine's output folder), else ./device-check-out."""
    return Path(arg or os.environ.get("OUT") or "device-check-out")


def run_probe(python: str, timeout_s: int, bench: bool) -> tuple[bytes, bytes, int | None, float]:
    """The probe exactly as validate-host runs it remotely: `timeout -k 10 T python3 - [--no-bench]`, script on stdin."""
    argv = ["timeout", "-k", "10", str(timeout_s), python, "-"] + ([] if bench else ["--no-bench"])
    env = dict(os.environ, PROBE_TORCH_TIMEOUT_S=os.environ.get("PROBE_TORCH_TIMEOUT_S", str(TORCH_TIMEOUT_S)))
    started = time.monotonic()
    try:
        done = subprocess.run(argv, input=PROBE.read_bytes(), capture_output=True, timeout=timeout_s + 20, env=env)
    except subprocess.TimeoutExpired as exc:
        return exc.stdout or b"", exc.stderr or b"", None, time.monotonic() - started
    return done.stdout, done.stderr, done.returncode, time.monotonic() - started


def found_gpus(probe: dict | None) -> list[dict]:
    """Physical GPUs the tools enumerated, else the devices PyTorch sees (as the verdict reads them)."""
    probe = probe or {}
    torch = probe.get("torch") or {}
    gpus = verdict.physical_gpus(probe.get("gpus") or [])
    if not gpus and torch.get("device_count"):
        gpus = [{"index": d.get("index"), "vendor": verdict.NVIDIA if torch.get("cuda") else None,
                 "market_name": d.get("name"), "gfx_target": (d.get("gcn_arch_name") or "").split(":")[0] or None}
                for d in torch.get("devices") or []]
    return gpus


def self_quote(probe: dict | None, ref: verdict.Reference, gpu_model: str | None, count: int | None) -> dict | None:
    """The quote to check against: the one given, else the gpu_model and count of the GPUs found (None: no GPU)."""
    gpus = found_gpus(probe)
    if not gpus:
        return None
    if not gpu_model:
        candidates, _ = verdict.identify(gpus[0], ref)
        gpu_model = candidates[0] if len(candidates) == 1 else None
    if not gpu_model:
        return None
    return {"offer_id": "device-check", "provider": "device-check", "gpu_model": gpu_model,
            "gpus_per_node": count or max(len(gpus), 1)}


def provenance(probe: dict | None, argv: list[str], started_at: str, seconds: float, rc, raw: bytes) -> dict:
    """Date, machine and tool versions of this run, taken from the probe's own document where it has them."""
    probe = probe or {}
    nv, torch, host = probe.get("nvidia") or {}, probe.get("torch") or {}, probe.get("host") or {}
    gpus = probe.get("gpus") or []
    return {
        "schema_version": "provider-eval.device-check/1",
        "started_at_utc": started_at,
        "hostname": host.get("hostname") or socket.gethostname(),
        "kernel_release": host.get("kernel_release") or platform.release(),
        "os": host.get("os_pretty_name"),
        "nvidia_smi_version_line": nv.get("smi_version_line"),
        "nvidia_driver_version": nv.get("driver_version"),
        "cuda_driver_version": nv.get("cuda_driver_version"),
        "cuda_toolkit_version": nv.get("nvcc_cuda_version"),
        "torch_version": torch.get("version"),
        "torch_cuda_version": torch.get("cuda"),
        "torch_hip_version": torch.get("hip"),
        "rocm_version": (probe.get("rocm") or {}).get("version_file"),
        "gpu_names": sorted({str(g.get("market_name")) for g in gpus if g.get("market_name")}),
        "gpu_count": len(gpus),
        "probe_python_version": host.get("python"),
        "checker_python_version": platform.python_version(),
        "command": argv,
        "probe_exit_status": rc,
        "probe_seconds": round(seconds, 1),
        "probe_stdout_sha256": hashlib.sha256(raw).hexdigest(),
        "git_commit": _git_commit(),
    }


def sql_verdict(out: Path, probe: dict, quote: dict, transport: list[str], raw: bytes, at: str) -> dict:
    """Record the run as validate-host does and decide it with the warehouse's SQL (needs duckdb: the project's venv)."""
    directory = out / "validations"
    sha = evidence.store_raw_probe(directory, raw)
    record = evidence.new_record(evidence.validation_id("localhost", 0, quote["offer_id"], at, sha), "localhost", 0,
                                 "device-check", quote, at, sha, probe, transport, [])
    path = evidence.write_record(directory, record)
    try:
        from provider_eval import validation_sql
    except ImportError as exc:  # a bare machine's system Python: the evidence is kept, decided later
        return {"verdict": "inconclusive", "quote": quote, "evidence_path": str(path),
                "reasons": [f"INCONCLUSIVE sql: not decided here ({exc}); run provider_eval.validation_sql.decide on {path}"]}
    decided = validation_sql.decide(path)
    return {"verdict": decided.verdict, "quote": quote, "reasons": decided.reasons, "checks": decided.checks,
            "evidence_path": str(path)}


def _git_commit() -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


def main(argv: list[str] | None = None) -> int:
    """Probe, decide, write the folder; return the exit code of the verdict."""
    parser = argparse.ArgumentParser(prog="device-check", description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", help="output folder (default: $OUT, else ./device-check-out)")
    parser.add_argument("--gpu-model", help="catalog model the machine is quoted as (default: the model found)")
    parser.add_argument("--gpus", type=int, help="GPUs quoted (default: the number found)")
    parser.add_argument("--python", default=os.environ.get("PROBE_PYTHON", "python3"),
                        help="interpreter that runs the probe, as on a rented host (default: python3)")
    parser.add_argument("--timeout", type=int, default=PROBE_TIMEOUT_S, help="probe deadline in seconds")
    parser.add_argument("--no-bench", action="store_true", help="skip the GEMM and HBM micro-benchmarks")
    args = parser.parse_args(argv)
    out = output_dir(args.out)
    out.mkdir(parents=True, exist_ok=True)

    started_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    stdout, stderr, rc, seconds = run_probe(args.python, args.timeout, not args.no_bench)
    (out / "probe_stdout.json").write_bytes(stdout)
    (out / "probe_stderr.txt").write_bytes(stderr)
    probe, problems = sanitise.parse_probe_output(stdout.decode("utf-8", "replace"))
    command = ["timeout", "-k", "10", str(args.timeout), args.python, "-"] + (["--no-bench"] if args.no_bench else [])
    (out / "provenance.json").write_text(json.dumps(provenance(probe, command, started_at, seconds, rc, stdout),
                                                    indent=2, sort_keys=True) + "\n", encoding="utf-8")

    ref = verdict.Reference.load()
    quote = self_quote(probe, ref, args.gpu_model, args.gpus)
    transport = [] if rc == 0 else [f"the probe exited with status {rc} (124: it hit the {args.timeout} s deadline)"]
    if probe is None:
        record = {"verdict": "inconclusive", "quote": quote, "reasons": transport + ["the probe printed no JSON document"]}
    elif not found_gpus(probe) or quote is None:
        why = NO_GPU if not found_gpus(probe) else "the GPUs found are not one catalog model; give --gpu-model"
        record = {"verdict": "inconclusive", "quote": None, "reasons": [f"INCONCLUSIVE gpu: {why}"],
                  "findings": [f.get("code") for f in probe.get("findings") or []]}
    else:
        record = sql_verdict(out, probe, quote, transport, stdout, started_at)
    (out / "verdict.json").write_text(json.dumps(record, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    summary = [f"device-check: {record['verdict'].upper()}"
               + (f" against {quote['gpu_model']} x {quote['gpus_per_node']}" if quote else ""), *record["reasons"],
               f"output: {out}"]
    (out / "summary.txt").write_text("\n".join(summary) + "\n", encoding="utf-8")
    print("\n".join(summary))
    return int({"pass": ExitCode.OK, "fail": ExitCode.NEGATIVE}.get(record["verdict"], ExitCode.INCONCLUSIVE))


if __name__ == "__main__":
    sys.exit(main())
