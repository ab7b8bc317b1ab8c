"""The bench's refreshes of the generated inputs: the first, an incremental one, and the full rebuild it is measured against."""
import multiprocessing
import resource
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path


@dataclass
class RefreshOutcome:
    """What a timed refresh in its own process hands back to the bench."""
    completed: bool
    message: str
    rows_in: int
    seconds: float
    clock: "StageClock"  # noqa: F821 - bench.timing's, with its spans and samples
    rss_before: int  # what the process (and its live children) held when the refresh began
    max_rss: int  # the process's own peak (ru_maxrss): catches peaks between samples


def _refresh_here(gen: dict, published: str, full: bool) -> RefreshOutcome:
    """In a fresh process: start the API server and import as `provider-eval refresh` does, then refresh, timed."""
    from bench.timing import StageClock, rss_bytes
    from provider_eval import gc_pause

    with gc_pause.importing():  # as provider_eval/cli/refresh.py imports
        from flows.ephemeral_api import start_ephemeral_api

        api_started = start_ephemeral_api()  # comes up while the flow's modules import, as in the CLI
        from flows.refresh import refresh
        from provider_eval import sql_layer
        from provider_eval.paths import SQL_DIR

        sql_layer.import_dbt()

    api_started()
    clock = StageClock()
    rss_before = rss_bytes()
    start = time.perf_counter()  # CLOCK_MONOTONIC: the bench process reads the same clock
    with clock.attach():
        state = refresh(sources=gen["sources"], workloads=gen["workloads_file"], warehouse_path=published,
                        sql_dir=str(SQL_DIR), full=full, return_state=True)
    seconds = time.perf_counter() - start
    completed = state.is_completed()
    return RefreshOutcome(completed, state.message or "", state.result().rows_in if completed else 0, seconds,
                          clock, rss_before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)


def timed_refresh(gen: dict, published: Path, what: str, full: bool = False) -> RefreshOutcome:
    """Run the real refresh flow on the generated inputs with every stage timed, in a process of its own.

    Each refresh starts in a new process, as `provider-eval refresh` and a deployment's flow run do:
    what an earlier refresh or the bench's queries left allocated is not counted in its RSS.
    """
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        outcome = pool.submit(_refresh_here, gen, str(published), full).result()
    clock = outcome.clock
    # Printed as it happens: a later step that fails (a full disk at SCALE=large) still leaves this on record.
    peak = max((rss for _, rss in clock.samples), default=0)
    print(f"bench: {what} {'done' if outcome.completed else 'failed'} in {outcome.seconds:.1f}s "
          f"(SQL models {clock.wall('sql_models'):.1f}s, sampled peak RSS {peak / 2**30:.2f} GiB, "
          f"{outcome.rss_before / 2**30:.2f} GiB held when it began)", flush=True)
    if not outcome.completed:
        raise SystemExit(f"bench: the {what} failed: {outcome.message}")
    return outcome


def _rescrape_now(path: str) -> None:
    """The same offers scraped again now, written over path: a new version of the same path, later than
    every observation so far (the generated scrapes end at the generation time) and none in the future."""
    import datetime as dt

    import polars as pl

    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    pl.read_csv(path, infer_schema=False).with_columns(pl.lit(now).alias("observed_at")).write_csv(path)


def _refreshed_on(warehouse_file: Path):
    """The UTC day of the clock the warehouse's last refresh ran with."""
    import duckdb

    with duckdb.connect(str(warehouse_file), read_only=True) as con:
        return con.execute("select (refreshed_at at time zone 'UTC')::date from raw.refresh").fetchone()[0]


def _started_from(warehouse_file: Path) -> str:
    """What the warehouse's last build started from: empty, copy or previous (raw.build)."""
    import duckdb

    with duckdb.connect(str(warehouse_file), read_only=True) as con:
        return con.execute("select started_from from raw.build").fetchone()[0]


def incremental_vs_full(gen: dict, published: Path, work: Path, refresh_s: float) -> dict:
    """One new scrape file refreshed incrementally (from a copy), one more in steady state (from the
    previous file), that file rewritten, nothing new, then the same inputs rebuilt from nothing; same rows?"""
    from bench.compare_warehouses import compare
    from bench.synthetic import next_scrape

    # The first scheduled refresh after the full one: one new scrape file lands beside everything
    # already staged. No publish has replaced a file yet, so it starts from a copy of the published one.
    first_new = next_scrape(gen["quote_files"][-1])
    warm = timed_refresh(gen, published, "incremental refresh (the first: from a copy)")
    warm_started_from = _started_from(published)
    # A scheduled refresh in steady state: one more scrape file, scraped now (the first new one is
    # dated at the generation time; 15 minutes after it would be in the future). It starts from the
    # file the last publish replaced, one refresh behind, so it loads the last refresh's file too
    # (docs/production.md).
    new_file = next_scrape(first_new)
    _rescrape_now(new_file)
    again = timed_refresh(gen, published, "incremental refresh")
    again_clock, incremental_s = again.clock, again.seconds
    started_from = _started_from(published)
    # A scraper that rewrites its one file: the same path again, scraped now (a new version; the last
    # one superseded). Until 2026-12-06 this recomputed the whole source's history models.
    _rescrape_now(new_file)
    version = timed_refresh(gen, published, "incremental refresh (a new version of the same path)")
    # A scheduled refresh that finds nothing new: only the reads and the clock moved
    # (docs/production.md, step 6). Its warehouse is the one compared with the full rebuild below.
    clock_day_before = _refreshed_on(published)
    idle = timed_refresh(gen, published, "refresh with nothing new")
    # A UTC midnight between the two refreshes moves every quote's age by a day: the clock then
    # reaches every cost model, as it should, and the count of models run says nothing about the reads.
    crossed_utc_day = _refreshed_on(published) != clock_day_before
    # The same final inputs rebuilt from nothing (`refresh --full`; staging cached as above): the
    # anchor the incremental refresh is measured against.
    incremental_copy = work / "incremental.duckdb"
    shutil.copyfile(published, incremental_copy)
    full = timed_refresh(gen, published, "full rebuild", full=True)
    full_clock, full_s = full.clock, full.seconds
    Path(new_file).unlink()
    Path(first_new).unlink()
    # Same rows both ways: every public table, EXCEPT ALL in both directions.
    t_compare = time.perf_counter()
    differences = {t: d for t, d in compare(str(incremental_copy), str(published)).items() if d != (0, 0)}
    print(f"bench: incremental vs full compared (EXCEPT ALL both ways) in {time.perf_counter() - t_compare:.1f}s",
          flush=True)
    return {
        "incremental_refresh_seconds": round(incremental_s, 3),
        "incremental_stages_seconds": {k: v["seconds"] for k, v in again_clock.report(1).items()},
        "incremental_refresh_note": "the same inputs plus one new quote-csv scrape file; "
                                    f"{again.rows_in:,} rows in (every landed file), one file staged, "
                                    f"built from the {started_from} start (previous: the file the last "
                                    "publish replaced, which also loads the last refresh's new file)",
        "incremental_started_from": started_from,
        # The copy of the published warehouse (0 when it started from the previous file) and the move of
        # the previous file in.
        "incremental_copy_seconds": round(again_clock.wall("copy"), 3),
        "incremental_take_previous_seconds": round(again_clock.wall("take_previous"), 3),
        # The first incremental refresh after the full one (one new file too): no previous file yet, a copy.
        "first_incremental_refresh_seconds": round(warm.seconds, 3),
        "first_incremental_started_from": warm_started_from,
        "first_incremental_copy_seconds": round(warm.clock.wall("copy"), 3),
        # Only the models a changed input reaches run (docs/production.md, step 5); the others keep their tables.
        "incremental_sql_model_seconds": again_clock.slowest_models(),
        # Its data tests run in the same stage, in no model's time: the five slowest.
        "incremental_slowest_check_seconds": again_clock.slowest_checks(),
        "incremental_models_kept": len(full_clock.slowest_models()) - len(again_clock.slowest_models()),
        "version_refresh_seconds": round(version.seconds, 3),
        "version_sql_model_seconds": version.clock.slowest_models(),
        "version_slowest_check_seconds": version.clock.slowest_checks(),
        "version_ratio_vs_full": round(version.seconds / full_s, 3),
        "unchanged_refresh_seconds": round(idle.seconds, 3),
        "unchanged_stages_seconds": {k: v["seconds"] for k, v in idle.clock.report(1).items()},
        "unchanged_models_run": len(idle.clock.model_seconds),
        "unchanged_refresh_crossed_utc_day": crossed_utc_day,
        "full_rebuild_seconds": round(full_s, 3),
        "full_rebuild_stages_seconds": {k: v["seconds"] for k, v in full_clock.report(1).items()},
        "incremental_ratio_vs_full": round(incremental_s / full_s, 3),
        "incremental_ratio_vs_first_refresh": round(incremental_s / refresh_s, 3),
        # Per refresh: the models whose first attempt ran out of memory and was built again alone, with
        # the seconds that attempt took ({} everywhere: no rerun).
        "memory_reruns_seconds": {"first_incremental": warm.clock.memory_rerun_seconds,
                                  "incremental": again_clock.memory_rerun_seconds,
                                  "version": version.clock.memory_rerun_seconds,
                                  "unchanged": idle.clock.memory_rerun_seconds,
                                  "full_rebuild": full_clock.memory_rerun_seconds},
        # Public tables whose rows differ between the incremental and the full build ({} = identical).
        "incremental_vs_full_differences": differences,
    }
