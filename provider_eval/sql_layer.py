"""Run the dbt project under sql/ on a warehouse file: build models and data tests, report each one."""
import datetime as dt
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

from provider_eval import dbt_cache, progress
from provider_eval.errors import SqlModelError

# dbt keeps global state (flags, adapters) per process: one invocation at a time.
_DBT_LOCK = threading.Lock()
# Statuses a node may end with in a build that may be published.
_OK = {"success", "pass", "no-op"}


@dataclass(frozen=True)
class NodeResult:
    """One model or data test dbt ran: its name, kind, status, seconds and dbt's message."""

    name: str
    resource_type: str
    status: str
    seconds: float
    message: str | None
    failures: int | None = None
    path: str | None = None  # the file that defines it, relative to sql/

    @property
    def ok(self) -> bool:
        """Whether this node lets the build be published."""
        return self.status in _OK


@dataclass(frozen=True)
class BuildResult:
    """Every node of one `dbt build`, in the order they finished, and the problem if any failed."""

    nodes: list[NodeResult]
    problem: str | None
    kept: int = 0  # models not run (no changed input reaches them): their tables stay as copied
    # The first attempts of nodes that ran out of memory side by side and were built again one at a
    # time (their failed outcome and seconds): a build that needed a rerun took longer than its nodes say.
    memory_reruns: list[NodeResult] = field(default_factory=list)

    @property
    def models(self) -> list[NodeResult]:
        """The models built (not the tests)."""
        return [n for n in self.nodes if n.resource_type == "model"]


def write_profile(work_dir: Path, database: Path, memory_limit: str, spill_dir: Path | None, threads: int = 1) -> Path:
    """A profiles.yml for one database file (dbt-duckdb), with bounded memory and times in UTC."""
    settings = {"TimeZone": "UTC", "memory_limit": memory_limit}
    if spill_dir is not None:
        settings["temp_directory"] = str(spill_dir)
    profile = {"provider_eval": {"target": "build", "outputs": {"build": {
        "type": "duckdb", "path": str(database), "schema": "main", "threads": threads, "settings": settings,
    }}}}
    work_dir.mkdir(parents=True, exist_ok=True)
    (work_dir / "profiles.yml").write_text(yaml.safe_dump(profile), encoding="utf-8")
    return work_dir


def _args(command: str, sql_dir: Path, work_dir: Path, target_dir: Path | None, file_log: str = "info") -> list[str]:
    # A command may be a group and its subcommand ("docs generate"): the options follow both.
    # No usage statistics, no version check, no console output (the caller logs each node), and
    # every file dbt writes goes into work_dir (or target_dir), never into sql/.
    return ["--no-send-anonymous-usage-stats", "--no-version-check", "--log-level", "none",
            "--log-level-file", file_log, "--log-path", str(work_dir / "logs"),
            *command.split(), "--project-dir", str(sql_dir), "--profiles-dir", str(work_dir),
            "--target-path", str(target_dir or work_dir / "target")]


def import_dbt() -> None:
    """Import dbt and its DuckDB adapter now (~1.5 CPU-s), e.g. while waiting for something else."""
    import dbt.adapters.duckdb  # noqa: F401
    import dbt.cli.main  # noqa: F401


def invoke(command: str, sql_dir: Path, work_dir: Path, extra: list[str] = (),
           on_node: Callable[[NodeResult], None] | None = None, target_dir: Path | None = None,
           manifest=None, file_log: str = "info"):
    """Run one dbt command in this process; returns dbt's result object (raises on a dbt crash).

    target_dir keeps dbt's manifest and parse state between runs (default: inside work_dir): dbt
    re-parses only what changed when the profile (database path, settings) is the same as last time.
    manifest: a parsed project (parsed()) to run instead of parsing sql/ again.
    file_log: dbt's log file level in work_dir/logs ("none": no log file).
    """
    from dbt.cli.main import dbtRunner  # dbt's import costs ~1 s: only when the SQL layer runs

    def callback(event) -> None:
        if on_node is not None and event.info.name == "NodeFinished":
            info = event.data.node_info
            on_node(NodeResult(info.node_name, info.resource_type, info.node_status,
                               _seconds(info.node_started_at, info.node_finished_at), None,
                               path=info.node_path or None))

    with _DBT_LOCK:
        try:
            result = dbtRunner(manifest=manifest, callbacks=[callback]).invoke(_args(command, sql_dir, work_dir, target_dir, file_log) + list(extra))
        finally:
            _close_duckdb()
    if result.exception is not None:
        raise SqlModelError(f"dbt {command} could not run: {result.exception}") from None
    return result


def parsed(sql_dir: Path, work_dir: Path, database: Path | str, target_dir: Path | None = None):
    """dbt's parsed project for a profile on database (written in work_dir): kept, else parsed now.

    The manifest is the same for every build of one version of sql/ into a file of the same name
    (nodes carry the catalog name, not the folder), so the 1-2.5 s parse is paid once per version.
    """
    from dbt.adapters.duckdb.credentials import DuckDBCredentials

    catalog = DuckDBCredentials.path_derived_database_name(str(database))
    key = dbt_cache.parse_key(sql_dir, catalog, "main")
    manifest = dbt_cache.load(key, lambda m: _still_valid(m, catalog))
    if manifest is None:
        result = invoke("parse", sql_dir, work_dir, ["--no-write-json"], target_dir=target_dir)
        if not result.success or result.result is None:
            raise SqlModelError(f"dbt could not parse {sql_dir}: {result.exception or 'see its log'}")
        manifest = result.result
        dbt_cache.store(key, manifest)
    return manifest


def _still_valid(manifest, catalog: str) -> bool:
    """Whether a kept manifest fits this run: every model in this catalog, and every environment
    variable the project read while parsing (dbt's env_var) still set to the value it had."""
    return (all(n.database == catalog for n in manifest.nodes.values() if n.resource_type == "model")
            and all(os.environ.get(k) == v for k, v in manifest.env_vars.items()))


def _seconds(started: str, finished: str) -> float:
    """Seconds between two of dbt's ISO timestamps (0 when either is missing)."""
    try:
        return (dt.datetime.fromisoformat(finished) - dt.datetime.fromisoformat(started)).total_seconds()
    except (TypeError, ValueError):
        return 0.0


def _close_duckdb() -> None:
    """Close the database dbt-duckdb keeps open for the process after a run.

    Its cached instance would otherwise hold the file, and this process's next connection with other
    settings (the quality gate, publishing) would be refused.
    """
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager

    with DuckDBConnectionManager._LOCK:
        env, DuckDBConnectionManager._ENV = DuckDBConnectionManager._ENV, None
        if env is not None:
            env.close()


def _node_results(run_result) -> list[NodeResult]:
    out = []
    for r in run_result.results if run_result is not None else []:
        status = str(getattr(r.status, "value", r.status))
        out.append(NodeResult(r.node.name, r.node.resource_type, status, float(r.execution_time or 0.0),
                              r.message, getattr(r, "failures", None), getattr(r.node, "original_file_path", None)))
    return out


# How DuckDB words a statement that needed more memory than the build's limit allows.
OUT_OF_MEMORY = "Out of Memory Error"


def out_of_memory_rerun(nodes: list[NodeResult]) -> list[str]:
    """The nodes to build again one at a time: those that ran out of memory and those skipped because
    of a failure; none when nothing ran out of memory or something else failed too (that failure stands)."""
    failed = [n for n in nodes if not n.ok and n.status != "skipped"]
    if not failed or not all(OUT_OF_MEMORY in (n.message or "") for n in failed):
        return []
    return [n.name for n in nodes if not n.ok]


def merge_rerun(first: list[NodeResult], rerun: list[NodeResult]) -> list[NodeResult]:
    """The first run's nodes with those run again replaced by their new outcome (in the order they finished)."""
    again = {n.name for n in rerun}
    return [n for n in first if n.name not in again] + rerun


def describe_failures(nodes: list[NodeResult]) -> str | None:
    """One line per failed model or test, naming it (None when every node passed)."""
    bad = [n for n in nodes if not n.ok and n.status != "skipped"]
    if not bad:
        return None
    skipped = [n.name for n in nodes if n.status == "skipped"]
    lines = []
    for n in bad:
        what = "SQL model" if n.resource_type == "model" else "check"
        detail = f"{n.failures} offending row(s)" if n.status == "fail" and n.failures else (n.message or n.status)
        where = f" ({n.path})" if n.path else ""
        lines.append(f"  {what} {n.name}{where} {n.status}: {' '.join(str(detail).split())}")
    if skipped:
        lines.append(f"  {len(skipped)} node(s) skipped because of it: {', '.join(sorted(skipped)[:8])}"
                     + (" …" if len(skipped) > 8 else ""))
    return "SQL build failed:\n" + "\n".join(lines)


# Models that read int_file_states and nothing else of raw.file_versions: each keeps the rows of its
# own staged table whose file counts, so a file-state change reaches it through that table
# (load_staged counts a staged table changed when a source with rows in it changed file states).
# raw.file_versions itself changes every refresh (each read moves last_seen_at and reads), so
# without this every benchmark model would run after a quotes-only scrape.
_FILE_STATE_FILTERS = frozenset({"int_current_benchmark_runs", "benchmark_requests", "offer_history"})
# Models that also read the versions' read counts (is_not_listed): skipped, like the filters above,
# when intermediate.int_refresh_moves says this refresh's reads flag no option (reads_settled).
_READ_COUNTERS = frozenset({"int_quote_latest"})


def selection(manifest, changed: set[str], reads_settled: bool = False) -> list[str]:
    """dbt --select terms for what the changed raw/ref tables ("raw.workloads", …) reach: their
    descendants, whose data tests dbt's (default, eager) indirect selection adds. Empty: nothing to build.

    reads_settled: the reads this refresh added flag no option (flows/input_changes.py)."""
    terms = sorted(f"source:{t}+" for t in changed - {"raw.file_versions"})
    if "raw.file_versions" in changed:
        terms += _file_version_terms(manifest, _READ_COUNTERS if reads_settled else frozenset())
    return terms


def _file_version_terms(manifest, settled: frozenset[str]) -> list[str]:
    """raw.file_versions' descendants, less those that read only file states (_FILE_STATE_FILTERS)
    and the read counters this refresh's reads do not move (settled)."""
    models = [n for n in manifest.nodes.values() if n.resource_type == "model"]

    def readers(node_id: str) -> list:
        return sorted((n for n in models if node_id in n.depends_on.nodes), key=lambda n: n.name)

    source = next(s for s in manifest.sources.values() if (s.source_name, s.name) == ("raw", "file_versions"))
    terms = ["source:raw.file_versions"]  # its own tests
    # Any reader other than the expected chain (stg_file_versions → int_file_states) runs with
    # everything below it, as does a reader of the chain outside the filters and the settled ones.
    for stg in readers(source.unique_id):
        if stg.name != "stg_file_versions":
            terms.append(f"{stg.name}+")
            continue
        terms.append(stg.name)
        for reader in readers(stg.unique_id):
            if reader.name in settled:
                continue
            if reader.name != "int_file_states":
                terms.append(f"{reader.name}+")
                continue
            terms.append(reader.name)
            terms += [f"{r.name}+" for r in readers(reader.unique_id) if r.name not in _FILE_STATE_FILTERS | settled]
    return list(dict.fromkeys(terms))  # a model reading both steps is named once


def _materialized_models(manifest) -> int:
    """How many models the project builds as a table or view (ephemeral ones are inlined)."""
    return sum(n.resource_type == "model" and n.config.materialized != "ephemeral" for n in manifest.nodes.values())


# dbt runs independent models side by side: a small model's time is mostly dbt's own bookkeeping
# around a short DuckDB statement, which overlaps. Two, not four: the models built at once share the
# build's one memory limit, and at bench scale four heavy ones spilled each other to disk (a full
# SQL build at SCALE=default: 231 s with 2 threads, 258 s with 4; the bundled samples: 7.8 s vs 8.0 s).
BUILD_THREADS = 2


def build(database: Path, sql_dir: Path, work_dir: Path, memory_limit: str, spill_dir: Path | None = None,
          on_node: Callable[[NodeResult], None] | None = None, target_dir: Path | None = None,
          full_refresh: bool = False, changed_inputs: set[str] | None = None,
          reads_settled: bool = False) -> BuildResult:
    """`dbt build` (models, then the data tests on them) on database; every node's outcome, named.

    full_refresh: incremental models are rebuilt whole (dbt --full-refresh), not appended to.
    changed_inputs: only what these raw/ref tables reach is built (selection()); None: everything.
    reads_settled: this refresh's reads flag no option (selection())."""
    with progress.span("sql_models") as detail:  # the span carries every node's outcome and seconds
        write_profile(work_dir, database, memory_limit, spill_dir, threads=BUILD_THREADS)
        manifest = parsed(sql_dir, work_dir, database, target_dir)
        # No manifest.json or run_results.json (~0.5 s to write): the compiled manifest is kept below,
        # once per version of sql/, for check-fit.
        base = ["--exclude-resource-type", "unit_test", "--no-write-json"] + (["--full-refresh"] if full_refresh else [])
        terms = None if changed_inputs is None else selection(manifest, changed_inputs, reads_settled)
        if terms == []:  # no changed input reaches any model: every table stays as copied
            detail["nodes"] = []
            return BuildResult([], None, _materialized_models(manifest))
        extra = base if terms is None else [*base, "--select", *terms]
        # No log file either (~0.3 CPU-s): every node's outcome comes back through on_node and the
        # results, and the build folder with its logs is removed after the refresh anyway.
        result = invoke("build", sql_dir, work_dir, extra, on_node, target_dir, manifest, file_log="none")
        nodes, success = _node_results(result.result), result.success
        again = out_of_memory_rerun(nodes)
        first_attempts = [n for n in nodes if n.name in again and n.status != "skipped"]
        detail["memory_reruns"] = first_attempts
        if again:
            # Models built side by side share the build's one memory limit: two heavy ones together
            # can need more than it holds while each fits alone (a full build at SCALE=default, now and
            # then). What failed so, and what it held up, run again one at a time; other failures stand.
            retry = invoke("build", sql_dir, work_dir, [*base, "--threads", "1", "--select", *again],
                           on_node, target_dir, manifest, file_log="none")
            nodes, success = merge_rerun(nodes, _node_results(retry.result)), retry.success
        detail["nodes"] = nodes
        problem = describe_failures(nodes) if not success or any(not n.ok for n in nodes) else None
        # Only a full build's compile is kept: an incremental one compiled the incremental branches,
        # which read the build's own tables and would not run where check-fit runs the compiled SQL.
        if problem is None and full_refresh:
            # The build compiled every model and test into the manifest it ran.
            dbt_cache.keep_compiled(sql_dir, lambda path: manifest.writable_manifest().write(str(path)))
        kept = 0 if changed_inputs is None else _materialized_models(manifest) - sum(n.resource_type == "model" for n in nodes)
        return BuildResult(nodes, problem, kept, first_attempts)


def slowest(nodes: list[NodeResult], n: int = 3) -> str:
    """The n slowest models as 'name 1.2 s, …' for a progress line."""
    top = sorted(nodes, key=lambda b: b.seconds, reverse=True)[:n]
    return ", ".join(f"{b.name} {b.seconds:.1f} s" for b in top)


def read_manifest(target_dir: Path) -> dict:
    """dbt's manifest.json of a run (compiled SQL, dependencies, columns)."""
    return json.loads((target_dir / "manifest.json").read_text(encoding="utf-8"))
