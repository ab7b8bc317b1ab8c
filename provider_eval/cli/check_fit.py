"""`provider-eval check-fit`: does a model fit in GPU memory, and how many GPUs does it need."""
from enum import Enum
from typing import Annotated

import typer

from provider_eval import output
from provider_eval.cli.shared import Format, FormatOpt, fail
from provider_eval.exit_codes import ExitCode


class Mode(str, Enum):
    inference = "inference"
    training = "training"
    lora = "lora"
    qlora = "qlora"


class Checkpointing(str, Enum):
    none = "none"
    selective = "selective"
    full = "full"


FIT_BREAKDOWN = ["weights_bytes_per_gpu", "kv_cache_bytes_per_gpu", "activation_bytes_per_gpu",
                 "optimizer_bytes_per_gpu", "reserve_bytes_per_gpu", "required_bytes_per_gpu",
                 "available_bytes_per_gpu", "headroom_bytes_per_gpu"]


def check_fit(
    model: Annotated[str, typer.Option(help="Model id from data/reference/llm_models.csv, e.g. llama-3.1-70b.")],
    gpu: Annotated[str, typer.Option(help="GPU model (catalog name or alias), e.g. MI300X.")],
    precision: Annotated[str | None, typer.Option(
        help="Weight precision: bf16, fp16, fp8, int8, int4, nf4, fp6, fp4 (default bf16; nf4 for qlora).")] = None,
    gpu_count: Annotated[int, typer.Option(
        "--gpus", min=1, max=64, help="GPU count (tensor parallel or sharded training).")] = 1,
    context: Annotated[int | None, typer.Option(
        min=1, help="Tokens per sequence (default: the model's maximum).")] = None,
    concurrency: Annotated[int, typer.Option(
        min=1, help="Sequences at once (inference) or micro-batch per GPU (training).")] = 1,
    mode: Annotated[Mode, typer.Option(help="inference, or training (full fine-tune), lora, qlora.")] = Mode.inference,
    kv_precision: Annotated[str | None, typer.Option(help="KV cache precision (default: 16-bit).")] = None,
    engine: Annotated[str | None, typer.Option(help="Inference engine: vllm, sglang (memory fraction).")] = None,
    gpu_memory_utilization: Annotated[float | None, typer.Option(
        min=0.01, max=1.0, help="Override the engine's memory fraction.")] = None,
    activation_checkpointing: Annotated[Checkpointing | None, typer.Option(
        help="Training activations: none, selective (default), full recomputation.")] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Does a model fit in GPU memory? Exit 0 fits, 1 does not fit, 3 unknown, 2 usage error."""
    from flows.ingest.workloads import qlora_base_problem, sixteen_bit_or_wider
    from provider_eval import feasibility

    # QLoRA means a 4-bit NF4 base unless stated; a 16-bit base is a usage error, never a silent bf16.
    if mode == Mode.qlora and (problem := qlora_base_problem(precision, sixteen_bit_or_wider())):
        fail(f"--precision {precision}: {problem.replace('mode: lora', '--mode lora')}", 2)

    known = feasibility.load_catalog()
    model_id = known.resolve_model(model)
    if model_id is None:
        fail(f"unknown model {model!r}; known: {', '.join(known.model_ids)}", 2)
    for name, value in (("precision", precision), ("kv-precision", kv_precision)):
        if value is not None and value.lower() not in known.precisions:
            fail(f"unknown {name} {value!r}; known: {', '.join(known.precisions)}", 2)
    gpu_model = known.resolve_gpu(gpu)
    if gpu_model is None:
        fail(f"unknown GPU {gpu!r} ({known.gpu_problem(gpu)}); known: {', '.join(known.gpu_models)}", 2)
    result = feasibility.check_fit({
        "model_id": model_id, "precision": precision.lower() if precision else None,
        "kv_precision": kv_precision.lower() if kv_precision else None,
        "context_tokens": context, "concurrency": concurrency, "mode": mode.value,
        "engine": engine.lower() if engine else None, "gpu_memory_utilization": gpu_memory_utilization,
        "activation_checkpointing": activation_checkpointing.value if activation_checkpointing else None,
        "gpu_model": gpu_model, "gpu_count": gpu_count,
    })
    result.pop("workload_id", None)
    if fmt != Format.table:
        output.render(list(result), [tuple(result.values())], fmt.value)
    else:
        rows = [(c.removesuffix("_bytes_per_gpu").replace("_", " "), result[c],
                 f"{result[c] / 1e9:,.1f} GB" if result[c] is not None else "") for c in FIT_BREAKDOWN]
        output.render(["per GPU", "bytes", "GB"], rows, "table",
                      title=f"{result['model_id']} {result['precision']} ({result['mode']}, "
                            f"{result['context_tokens']} tokens x {result['concurrency']}) on "
                            f"{result['gpu_count']} x {result['gpu_model']}")
        print(f"{result['verdict']}; fewest {result['gpu_model']} GPUs that fit: "
              f"{result['min_gpus'] if result['min_gpus'] is not None else 'none up to 64'}")
        for reason in result["reasons"]:
            print(f"  - {reason}")
    raise typer.Exit(int({"fits": ExitCode.OK, "unknown": ExitCode.INCONCLUSIVE}.get(result["verdict"], ExitCode.NEGATIVE)))
