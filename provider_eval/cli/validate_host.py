"""`provider-eval validate-host`: probe a rented host over SSH and check it against its quote."""
from pathlib import Path
from typing import Annotated

import typer

from provider_eval import output
from provider_eval.cli.shared import Format, FormatOpt, WarehouseOpt, err, fail
from provider_eval.errors import ProviderEvalError
from provider_eval.exit_codes import ExitCode


VERDICT_EXIT = {"pass": ExitCode.OK, "fail": ExitCode.NEGATIVE, "inconclusive": ExitCode.INCONCLUSIVE}


def validate_host(
    host: Annotated[str, typer.Argument(help="The rented server: hostname or IP address.")],
    offer: Annotated[str, typer.Option("--offer", help="Offer id whose quote the host must match.")],
    user: Annotated[str, typer.Option(help="SSH login name.")] = "root",
    port: Annotated[int, typer.Option(help="SSH port.")] = 22,
    identity_file: Annotated[Path, typer.Option("--identity-file", "-i", help="Private key for key auth.")] = Path("~/.ssh/id_ed25519"),
    known_hosts: Annotated[Path, typer.Option(help="known_hosts holding the host's key (unknown keys are refused).")] = Path("~/.ssh/known_hosts"),
    timeout: Annotated[float, typer.Option(help="Seconds the whole probe may take on the host.")] = 300,
    connect_timeout: Annotated[float, typer.Option(help="Seconds for TCP connect, SSH handshake and auth.")] = 10,
    bench: Annotated[bool, typer.Option(help="Run the bf16 GEMM and HBM copy micro-benchmarks.")] = True,
    deep: Annotated[bool, typer.Option(help="Also run rccl-tests all_reduce_perf and RVS gst when installed (slow).")] = False,
    workload: Annotated[str | None, typer.Option(help="Also run a representative benchmark from an allow-listed "
                                                 "template (vllm-serve); its result is ingested as a measured run.")] = None,
    workload_param: Annotated[list[str] | None, typer.Option(help="Template parameter KEY=VALUE (repeatable), "
                                                             "e.g. model=meta-llama/Llama-3.1-8B-Instruct.")] = None,
    workload_timeout: Annotated[float, typer.Option(help="Seconds the representative benchmark may take.")] = 1800,
    warehouse_path: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Probe a rented host over SSH and check it against a quote before signing (exit 0 pass, 1 fail, 3 inconclusive)."""
    from flows.validate_host import validate_host as validation_flow
    from flows.probe.validate import summary_json
    from provider_eval import console_logs

    params = {}
    for item in workload_param or []:
        key, sep, value = item.partition("=")
        if not sep:
            fail(f"--workload-param {item!r} is not KEY=VALUE", ExitCode.USAGE)
        params[key.strip()] = value.strip()
    console_logs.quiet_tracebacks()
    # The same Prefect flow the deployment runs (validate-host/validate-host), in this process.
    with err.status(f"probing {host} over SSH"):
        state = validation_flow(host=host, offer_id=offer, user=user, port=port, identity_file=str(identity_file),
                                known_hosts=str(known_hosts), warehouse_path=str(warehouse_path), timeout_s=timeout,
                                connect_timeout_s=connect_timeout, bench=bench, deep=deep, workload=workload,
                                workload_params=params, workload_timeout_s=workload_timeout, return_state=True)
    result = state.result(raise_on_failure=False)
    if isinstance(result, ProviderEvalError):
        # No verdict at all: unsafe input or unknown offer (2), refused or unreachable (5); never a verdict's code.
        fail(f"no validation recorded: {result}", result.exit_code)
    if isinstance(result, BaseException):
        raise result
    # The flow's record carries the warehouse's verdict: validate-host decided it with the SQL models the
    # refresh builds (flows/probe/validate.py), so it is printed as is, not decided again.
    record = result
    if fmt == Format.json:
        print(summary_json(record))
    else:
        rows = [(c["check"], c["status"], c["message"]) for c in record["checks"]]
        if fmt == Format.csv:
            output.render(["check", "status", "message"], rows, "csv")
        else:
            output.render(["check", "status", "message"], rows, "table",
                          title=f"{host} vs offer {offer}: {record['verdict'].upper()}")
            err.print(f"evidence: {record['evidence_path']} (loaded into hardware_validations by the next refresh)",
                      highlight=False)
    raise typer.Exit(int(VERDICT_EXIT[record["verdict"]]))
