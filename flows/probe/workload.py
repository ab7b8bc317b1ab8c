"""A representative benchmark on the rented host: an allow-listed command template run over SSH.

The user picks a template and gives parameters; every parameter is checked against its own pattern
and range, and every token is shell-quoted, so no text from a quote or a user reaches the remote
shell unchecked. The result file comes back on stdout and is kept as evidence, then ingested by the
next refresh through the benchmark adapter of the template's format.
"""
import json
import re
import shlex
import secrets
from dataclasses import dataclass
from pathlib import Path

from flows.probe import ssh_runner
from provider_eval.errors import ProviderEvalError
from provider_eval.exit_codes import ExitCode

MODEL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")
METADATA_VALUE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._/+-]{0,127}$")


class WorkloadRejected(ProviderEvalError):
    """A benchmark template or parameter failed the allow-list; nothing was sent."""

    exit_code = ExitCode.USAGE


@dataclass(frozen=True)
class Param:
    """One template parameter: a pattern or an integer range, and a default."""

    pattern: re.Pattern | None = None
    int_range: tuple[int, int] | None = None
    default: str | None = None

    def check(self, name: str, value) -> str:
        """The parameter as a safe token, or WorkloadRejected naming it."""
        text = str(value).strip()
        if self.int_range:
            low, high = self.int_range
            if not text.isdigit() or not low <= int(text) <= high:
                raise WorkloadRejected(f"benchmark parameter {name}={value!r} must be a whole number in {low}..{high}")
            return str(int(text))
        if not self.pattern.match(text):
            raise WorkloadRejected(f"benchmark parameter {name}={value!r} is not allowed (pattern {self.pattern.pattern})")
        return text


@dataclass(frozen=True)
class Template:
    """An allow-listed benchmark command, the parameters it takes, and the format of its result file."""

    argv: tuple[str, ...]
    params: dict[str, Param]
    result_format: str


TEMPLATES = {
    # `vllm bench serve` against the vLLM server the user started on the host (default port 8000),
    # random prompts of fixed lengths; --save-result writes the JSON the vllm-serve adapter reads.
    "vllm-serve": Template(
        argv=("vllm", "bench", "serve", "--model", "{model}", "--port", "{port}",
              "--dataset-name", "random", "--random-input-len", "{input_len}",
              "--random-output-len", "{output_len}", "--num-prompts", "{num_prompts}",
              "--max-concurrency", "{concurrency}", "--save-result", "--result-dir", "{result_dir}",
              "--result-filename", "result.json"),
        params={"model": Param(pattern=MODEL_ID), "port": Param(int_range=(1, 65535), default="8000"),
                "input_len": Param(int_range=(1, 1_048_576), default="1024"),
                "output_len": Param(int_range=(1, 1_048_576), default="1024"),
                "num_prompts": Param(int_range=(1, 100_000), default="200"),
                "concurrency": Param(int_range=(1, 4096), default="16")},
        result_format="vllm-serve",
    ),
}


def build_command(template_name: str, params: dict, metadata: dict, timeout_s: int) -> tuple[str, str]:
    """The remote command (every token validated and quoted) and the result directory it uses."""
    template = TEMPLATES.get(template_name)
    if template is None:
        raise WorkloadRejected(f"benchmark template {template_name!r} is not one of {sorted(TEMPLATES)}")
    unknown = set(params) - set(template.params)
    if unknown:
        raise WorkloadRejected(f"benchmark template {template_name!r} takes no parameter(s) {sorted(unknown)}")
    values = {}
    for name, spec in template.params.items():
        if name not in params and spec.default is None:
            raise WorkloadRejected(f"benchmark template {template_name!r} needs {name}=…")
        values[name] = spec.check(name, params.get(name, spec.default))
    result_dir = f"/tmp/provider-eval-bench-{secrets.token_hex(8)}"
    values["result_dir"] = result_dir
    argv = [token.format(**values) for token in template.argv]
    for key, value in metadata.items():
        if not re.fullmatch(r"[a-z_]{1,32}", key) or not METADATA_VALUE.match(str(value)):
            raise WorkloadRejected(f"benchmark metadata {key}={value!r} is not allowed")
        argv += ["--metadata", f"{key}={value}"]
    seconds = int(timeout_s)
    run = shlex.join(["timeout", "-k", str(ssh_runner.KILL_AFTER_S), str(seconds), *argv])
    # The benchmark's own output goes to stderr (bounded by the runner); stdout carries only the result.
    command = (f"mkdir -p {shlex.quote(result_dir)} && {run} >&2 && "
               f"cat {shlex.quote(result_dir + '/result.json')}; status=$?; "
               f"rm -rf {shlex.quote(result_dir)}; exit $status")
    return command, result_dir


@dataclass
class WorkloadResult:
    """What the representative benchmark produced: the result document, or why there is none."""

    template: str
    params: dict
    result: dict | None
    problem: str | None
    result_format: str


def run_workload(target: ssh_runner.Target, template_name: str, params: dict, metadata: dict,
                 connect_timeout_s: float, timeout_s: float) -> WorkloadResult:
    """Run one allow-listed benchmark on the host; its result JSON comes back on stdout."""
    command, _ = build_command(template_name, params, metadata, max(1, int(timeout_s)))
    result = ssh_runner.run_command(target, command, connect_timeout_s=connect_timeout_s,
                                    command_timeout_s=timeout_s)
    fmt = TEMPLATES[template_name].result_format
    problem, doc = None, None
    if result.timed_out:
        problem = f"the benchmark did not finish within {timeout_s:g} s"
    elif result.truncated:
        problem = "the benchmark's result was larger than the output cap"
    elif result.exit_status != 0:
        tail = " ".join(result.stderr.strip().splitlines()[-3:])[-300:]
        problem = f"the benchmark exited with status {result.exit_status}: {tail}"
    else:
        try:
            doc = json.loads(result.stdout)
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            problem, doc = f"the benchmark's result is not a JSON object ({exc})", None
    return WorkloadResult(template_name, params, doc, problem, fmt)


def save_result(directory: Path, validation_id: str, result: WorkloadResult) -> Path | None:
    """Keep the result file where the next refresh ingests it (validations/benchmarks/)."""
    if result.result is None:
        return None
    path = directory / "benchmarks" / result.result_format / f"{validation_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    tmp.write_text(json.dumps(result.result, indent=1), encoding="utf-8")
    tmp.replace(path)
    return path
