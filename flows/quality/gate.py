"""Run the expectation suites on a built (unpublished) warehouse and build Data Docs beside it."""
import datetime as dt
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from prefect import get_run_logger, task

from flows.quality.suites import ROW_FAILURE_LIMIT_PCT, ROW_FAILURE_MIN_ROWS, Suite, all_suites
from provider_eval import progress, warehouse
from provider_eval.errors import RefreshFailed

# GX phones home and logs chattily unless told not to; the gate must print nothing on success.
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

DOCS_SITE = "warehouse"


@dataclass
class Failure:
    """One failed expectation: which suite and table, what was expected, how many rows broke it."""

    suite: str
    table: str
    expectation: str
    column: str | None
    unexpected_rows: int | None
    rows: int | None
    detail: str
    # False for a row-level expectation broken by few rows: reported, the rows excluded, publish goes on.
    blocking: bool = True

    def line(self) -> str:
        """A readable one-line summary for the CLI."""
        where = f"{self.table}.{self.column}" if self.column else self.table
        counted = f"{self.unexpected_rows} of {self.rows} row(s)" if self.unexpected_rows is not None else ""
        return f"  {self.suite}: {self.expectation} on {where} failed {counted}{self.detail}".rstrip()


@dataclass
class GateResult:
    """What the gate found, and where its Data Docs are."""

    success: bool
    failures: list[Failure]
    docs_index: Path

    @property
    def blocking(self) -> list[Failure]:
        """The systemic failures: any one of them stops the publish."""
        return [f for f in self.failures if f.blocking]

    @property
    def warnings(self) -> list[Failure]:
        """Row-level failures within the limit: their rows are excluded from ranking with a reason."""
        return [f for f in self.failures if not f.blocking]


def _quiet_gx() -> None:
    for name in ("great_expectations", "great_expectations.core", "great_expectations.data_context"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _context(docs_dir: Path):
    """An in-memory GX context whose only Data Docs site is the folder beside the warehouse."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig, InMemoryStoreBackendDefaults, ProgressBarsConfig)

    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
        progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False),
        data_docs_sites={DOCS_SITE: {
            "class_name": "SiteBuilder",
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs_dir)},
        }},
        analytics_enabled=False,
    )
    return gx.get_context(mode="ephemeral", project_config=config)


def _detail(result: dict, kwargs: dict) -> str:
    sample = result.get("partial_unexpected_list")
    if sample:
        return f"; e.g. {sample[:3]}"
    if "observed_value" in result:
        return f"; expected {kwargs.get('value', '')}, observed {result['observed_value']}"
    return ""


def _row_level_note(row_level: bool, systemic: bool, failing_pct: float | None, meta: dict) -> str:
    """What a row-level failure means: rows excluded with a reason, or too many rows (systemic)."""
    if not row_level:
        return ""
    if systemic:
        return (f"; {failing_pct:.1f} % of rows, above the row-level limit ({ROW_FAILURE_LIMIT_PCT:g} % and "
                f"{ROW_FAILURE_MIN_ROWS} rows): systemic")
    return f"; excluded from ranking as {meta['excluded_as']}" if meta.get("excluded_as") else ""


def _counted_frame(rows: int):
    """A frame of `rows` rows and no column (a RangeIndex allocates nothing until GX hashes it)."""
    import pandas as pd

    return pd.DataFrame(index=pd.RangeIndex(rows))


def _no_batch_fingerprints() -> None:
    """Stop GX hashing every frame it validates into a batch marker nobody reads.

    GX's pandas engine md5s a hash of every row (and of the index: a counted frame's n rows too) of
    any frame under its HASH_THRESHOLD bytes, as a "fingerprint" in the batch markers. The gate's
    frames are read fresh from the build on every refresh and nothing compares fingerprints: for the
    10M-row quote history that hash alone was 2.2 s of every refresh, growing with the history.
    Fails loudly (AttributeError) if a GX release drops the setting, instead of silently hashing again.
    """
    from great_expectations.execution_engine import pandas_execution_engine

    pandas_execution_engine.HASH_THRESHOLD  # noqa: B018 - exists, or the gate fails here, visibly
    pandas_execution_engine.HASH_THRESHOLD = 0


def validate(build_path: Path, docs_dir: Path, now: dt.datetime | None = None) -> GateResult:
    """Validate every suite against frames of the built warehouse; Data Docs are written either way."""
    import great_expectations as gx
    from great_expectations.data_context.types.resource_identifiers import ExpectationSuiteIdentifier

    _quiet_gx()
    _no_batch_fingerprints()
    now = now or dt.datetime.now(dt.timezone.utc)
    docs_dir.mkdir(parents=True, exist_ok=True)
    with warehouse.connect(build_path, read_only=True) as con:
        suites: list[Suite] = all_suites(con, now)
        frames = {s.name: _counted_frame(con.execute(s.frame_sql).fetchone()[0]) if s.counted
                  else con.execute(s.frame_sql).df() for s in suites}
    context = _context(docs_dir)
    source = context.data_sources.add_pandas("marts")
    definitions = []
    for s in suites:
        batch = source.add_dataframe_asset(s.name).add_batch_definition_whole_dataframe("whole table")
        suite = context.suites.add(gx.ExpectationSuite(name=s.name))
        for expectation in s.expectations:
            suite.add_expectation(expectation)
        definitions.append(context.validation_definitions.add(
            gx.ValidationDefinition(name=s.name, data=batch, suite=suite)))
    failures, documented = [], []
    for definition, s in zip(definitions, suites):
        # No UpdateDataDocsAction per checkpoint: each would rebuild the site (index included) with
        # fresh Jinja environments; the pages are built once below, from every run's results.
        checkpoint = context.checkpoints.add(gx.Checkpoint(
            name=f"gate_{s.name}", validation_definitions=[definition],
            result_format={"result_format": "SUMMARY"},
        ))
        run = checkpoint.run(batch_parameters={"dataframe": frames[s.name]})
        documented += [*run.run_results, ExpectationSuiteIdentifier(name=s.name)]
        for validation in run.run_results.values():
            for r in validation.results:
                if r.success:
                    continue
                kwargs = r.expectation_config.kwargs
                meta = r.expectation_config.meta or {}
                failing_pct = r.result.get("unexpected_percent")
                row_level = meta.get("level") == "row" and failing_pct is not None
                systemic = row_level and (failing_pct > ROW_FAILURE_LIMIT_PCT
                                          and (r.result.get("unexpected_count") or 0) >= ROW_FAILURE_MIN_ROWS)
                failures.append(Failure(
                    suite=s.name, table=s.table, expectation=r.expectation_config.type,
                    column=kwargs.get("column"),
                    unexpected_rows=r.result.get("unexpected_count"), rows=r.result.get("element_count"),
                    detail=(f" (where {meta['where']})" if meta.get("where") else "") + _detail(r.result, kwargs)
                           + _row_level_note(row_level, systemic, failing_pct, meta),
                    blocking=not row_level or systemic,
                ))
    context.build_data_docs(site_names=[DOCS_SITE], resource_identifiers=documented)
    return GateResult(success=not any(f.blocking for f in failures), failures=failures,
                      docs_index=docs_dir / "index.html")


def unchanged_since_passed(changed_inputs: set[str], reads_settled: bool, files_state_changed: int) -> bool:
    """Whether an incremental build changed nothing the suites read, so the published warehouse's
    passed gate stands: only the files' reads and last-seen times moved (raw.file_versions), with no
    file state changed and no option flagged by the reads. What that rebuilds (stg_file_versions,
    int_file_states, input_files) the suites do not read, except int_file_states' states, which
    change only with a file's state; and `observed_at <= now` only gets easier as now moves."""
    return changed_inputs <= {"raw.file_versions"} and reads_settled and files_state_changed == 0


@task
def validate_marts(build_path: str, docs_dir: str) -> GateResult:
    """Validate the built warehouse's marts and write Data Docs (a failed expectation is a result)."""
    return validate(Path(build_path), Path(docs_dir))


@progress.timed("quality_gate")
def quality_gate(build_path: str, docs_dir: str) -> str:
    """The refresh's gate: raise (so nothing is published) on a systemic failure; log row-level ones."""
    # Raised here in the flow, not inside the task, so a failed gate reads as one message rather
    # than a task traceback in Prefect's log.
    result = validate_marts(build_path, docs_dir)
    if not result.success:
        raise RefreshFailed(
            "quality gate failed; the previous warehouse stays published:\n"
            + "\n".join(f.line() for f in result.blocking)
            + f"\n  Data Docs: {result.docs_index}"
        )
    for failure in result.warnings:
        get_run_logger().warning("quality gate (row-level, not blocking):%s", failure.line().removeprefix(" "))
    return str(result.docs_index)
