"""`provider-eval check-compat`: is a GPU + ROCm + OS + kernel + PyTorch + engine stack supported."""
from typing import Annotated

import typer

from provider_eval import output
from provider_eval.cli.shared import Format, FormatOpt
from provider_eval.exit_codes import ExitCode


def check_compat(
    gpu: Annotated[str, typer.Option(help="GPU model (catalog name or alias), e.g. MI350X.")],
    rocm: Annotated[str | None, typer.Option(help="ROCm version, e.g. 6.4.1 (6.4 means every 6.4.x).")] = None,
    os_name: Annotated[str | None, typer.Option("--os", help="OS release, e.g. 'Ubuntu 22.04.5'.")] = None,
    kernel: Annotated[str | None, typer.Option(help="Kernel release (uname -r), e.g. 5.15.0-122-generic.")] = None,
    torch: Annotated[str | None, typer.Option(help="PyTorch version, e.g. 2.6.")] = None,
    engine: Annotated[str | None, typer.Option(help="Inference engine, e.g. vllm.")] = None,
    driver: Annotated[str | None, typer.Option(help="amdgpu driver version, e.g. 6.4.x or 30.10.1.")] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Is a GPU + ROCm + OS + kernel + PyTorch + engine stack supported? Exit 0 supported, 1 unsupported, 3 unknown."""
    from provider_eval import feasibility

    # An unknown GPU is not a usage error: the check answers "unknown" with the reason.
    gpu_model = feasibility.load_catalog().resolve_gpu(gpu) or gpu
    result = feasibility.check_compat({
        "gpu_model": gpu_model, "rocm_version": rocm, "os": os_name, "kernel": kernel, "torch_version": torch,
        "engine": engine.lower() if engine else None, "amdgpu_driver_version": driver,
    })
    if fmt != Format.table:
        output.render(list(result), [tuple(result.values())], fmt.value)
    else:
        stack = ", ".join(f"{k}{v}" for k, v in (("ROCm ", rocm), ("", os_name), ("kernel ", kernel),
                                                 ("PyTorch ", torch), ("", engine), ("amdgpu ", driver)) if v)
        target = result["llvm_target"] or "gfx target unknown"
        print(f"{result['verdict']}: {result['gpu_model']} ({target}) with {stack or 'nothing declared'}")
        for reason in result["reasons"]:
            print(f"  - {reason}")
    raise typer.Exit(int({"supported": ExitCode.OK, "unsupported": ExitCode.NEGATIVE}.get(
        result["verdict"], ExitCode.INCONCLUSIVE)))
