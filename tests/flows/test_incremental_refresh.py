"""Incremental refresh (#20): a build from the published warehouse loads only what changed, and
after a sequence of changes every public table equals a full rebuild from the same inputs."""
import datetime as dt
import shutil
from decimal import Decimal

import duckdb
import pytest

from bench.compare_warehouses import compare
from flows.load import load_key
from flows.ingest.stage import FileOutcome
from flows.refresh import refresh
from provider_eval.paths import DATA_DIR, DEFAULT_WORKLOADS, SQL_DIR
from tests.benchmark_files import detailed_vllm_result, write_json
from tests.conftest import on_one_utc_day, write_sources

SAMPLES = DATA_DIR / "samples"
QUOTES = (SAMPLES / "quotes" / "seed_000_example.csv").read_text(encoding="utf-8")
# A second scrape: the MI300X row again (same content: times_observed 2), one new price, and a
# negative price that is quarantined.
SECOND = QUOTES.splitlines()[0] + "\n" + "\n".join([
    QUOTES.splitlines()[1],
    QUOTES.splitlines()[2].replace(",2.75,", ",2.60,"),
    QUOTES.splitlines()[3].replace(",4.00,", ",-4.00,"),
]) + "\n"


def _dated_rescrape(price_of_mi300x: str) -> str:
    """Every sample offer listed again, dated an hour ago (a scrape: new observed_at for all), the
    MI300X at another price: only that option's costs may change."""
    lines = QUOTES.splitlines()
    when = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    rows = [line.replace(",2.00,", f",{price_of_mi300x},") if "mi300x" in line else line for line in lines[1:]]
    return "\n".join([lines[0] + ",observed_at"] + [f"{r},{when}" for r in rows]) + "\n"


def _refresh(warehouse, sources, full=False, workloads=DEFAULT_WORKLOADS):
    state = refresh(sources=str(sources), workloads=str(workloads), warehouse_path=str(warehouse),
                    sql_dir=str(SQL_DIR), full=full, return_state=True)
    assert state.is_completed(), state.message
    return state.result()


def _raw(warehouse, sql):
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute(sql).fetchall()


def _changes(warehouse):
    """What the last build changed: sorted (source, change) pairs."""
    return sorted(_raw(warehouse, "select source_name, change from raw.file_changes"))


def _started_from(warehouse):
    """What the last build started from: empty, copy or previous."""
    return _raw(warehouse, "select started_from from raw.build")[0][0]


@pytest.fixture(scope="module")
def sequence(tmp_path_factory):
    """Refreshes of one warehouse, each after one kind of change, then one full refresh of the end state."""
    return on_one_utc_day(lambda: _sequence(tmp_path_factory))


def _sequence(tmp_path_factory):
    """The fixture's refreshes, in a folder of their own."""
    root = tmp_path_factory.mktemp("incremental")
    (root / "quotes").mkdir()
    (root / "quotes" / "a.csv").write_text(QUOTES, encoding="utf-8")
    (root / "extra.csv").write_text(QUOTES.replace("seed-000-example", "extra-provider"), encoding="utf-8")
    shutil.copy(SAMPLES / "benchmarks" / "seed_000_runs.csv", root / "runs.csv")
    write_json(root / "detailed" / "run.json", detailed_vllm_result(300, 3))
    quotes = {"name": "quotes", "kind": "quotes", "format": "quote-csv", "path": "quotes/*.csv",
              "defaults": {"currency": "USD"}}
    runs = {"name": "runs", "kind": "benchmarks", "format": "run-csv", "path": "runs.csv"}
    vllm = {"name": "vllm", "kind": "benchmarks", "format": "vllm-serve", "path": "detailed/*.json"}
    extra = {"name": "extra", "kind": "quotes", "format": "quote-csv", "path": "extra.csv",
             "defaults": {"currency": "USD"}}
    warehouse = root / "wh" / "w.duckdb"
    seen = {}

    sources = write_sources(root, [quotes, runs, vllm, extra])
    _refresh(warehouse, sources)
    seen["first"] = _changes(warehouse)
    # A new file (one row quarantined), and a new version of the per-request benchmark file.
    (root / "quotes" / "b.csv").write_text(SECOND, encoding="utf-8")
    write_json(root / "detailed" / "run.json", detailed_vllm_result(200, 5, seed=8))
    seen["second"] = _refresh(warehouse, sources)
    seen["second_changes"] = _changes(warehouse)
    seen["second_start"] = _started_from(warehouse)
    # A file changed in place (its old MI350X price, in no other file, superseded), a source removed,
    # a file rejected.
    (root / "quotes" / "a.csv").write_text(QUOTES.replace(",4.00,", ",4.10,"), encoding="utf-8")
    (root / "quotes" / "c.csv").write_bytes(b"\xff\xfe\x00not,a\x00csv\n\x00\x00")
    sources = write_sources(root, [quotes, runs, vllm])
    seen["third"] = _refresh(warehouse, sources)
    seen["third_changes"] = _changes(warehouse)
    seen["third_start"] = _started_from(warehouse)
    # Nothing changed: nothing loaded.
    _refresh(warehouse, sources)
    seen["fourth_changes"] = _changes(warehouse)
    seen["fourth_start"] = _started_from(warehouse)
    # A dated re-scrape of every offer (new observed_at for all) with one price changed: the cost
    # models keep the other options' rows and must recost the MI300X (issue #20).
    (root / "quotes" / "d.csv").write_text(_dated_rescrape("2.20"), encoding="utf-8")
    _refresh(warehouse, sources)
    seen["rescrape_mi300x"] = _raw(warehouse, "select distinct usd_per_node_hour, observed_at from workload_costs "
                                              "where offer_id = 'seed-000-mi300x-server'")
    seen["rescrape_observed"] = _raw(warehouse, "select count(distinct observed_at) from workload_costs")
    # The same dated scrape delivered again in another file (its rows in another order): the same
    # content, so each of its groups in offer_history is merged with the stored row (found by its
    # stated time), not added twice.
    header, *rows = (root / "quotes" / "d.csv").read_text(encoding="utf-8").splitlines()
    (root / "quotes" / "d2.csv").write_text("\n".join([header, *reversed(rows)]) + "\n", encoding="utf-8")
    _refresh(warehouse, sources)
    seen["redelivered"] = _raw(warehouse, "select count(*), min(times_observed), max(times_observed), "
                                          "count(distinct observation_hash) from offer_history "
                                          "where observed_at_stated and observed_at = "
                                          "(select max(observed_at) from offer_history where observed_at_stated)")
    seen["redelivered_rows"] = len(rows)
    # A second MI325X offer of the same provider under the same key (another region, say): the kept
    # MI325X rows' config id must gain its /offer_id suffix too, though their costs did not change.
    mi325x = QUOTES.splitlines()[2]
    (root / "quotes" / "e.csv").write_text(
        QUOTES.splitlines()[0] + "\n" + mi325x.replace("seed-000-mi325x-server", "seed-000-mi325x-second") + "\n",
        encoding="utf-8")
    _refresh(warehouse, sources)
    seen["mi325x_config_ids"] = _raw(warehouse, "select distinct offer_id, config_id from workload_costs "
                                                "where gpu_model = 'MI325X' order by offer_id")
    # workloads.yaml changed (the seed's task is now three jobs): every cost is recomputed.
    workloads = root / "workloads.yaml"
    text = DEFAULT_WORKLOADS.read_text(encoding="utf-8")
    assert "    unit: jobs\n    quantity: 1\n" in text
    workloads.write_text(text.replace("    unit: jobs\n    quantity: 1\n", "    unit: jobs\n    quantity: 3\n", 1),
                         encoding="utf-8")
    seen["seed_before"] = _raw(warehouse, "select offer_id, total_cost_usd from workload_costs "
                                          "where workload_id = 'seed-000-same-task' order by offer_id")
    _refresh(warehouse, sources, workloads=workloads)
    seen["seed_after"] = _raw(warehouse, "select offer_id, total_cost_usd from workload_costs "
                                         "where workload_id = 'seed-000-same-task' order by offer_id")
    incremental = root / "incremental.duckdb"
    shutil.copy(warehouse, incremental)
    _refresh(warehouse, sources, full=True, workloads=workloads)
    seen["full_changes"] = _changes(warehouse)
    return {"incremental": incremental, "full": warehouse, **seen}


def test_each_refresh_loaded_only_what_changed(sequence):
    """Each build loads what changed since the warehouse it started from: a copy of the published one
    (the second: no earlier file was replaced yet; the fourth: nothing new since the published one), or
    the file the last publish replaced, one refresh behind (the third: it catches up the second's changes)."""
    assert sequence["first"].count(("extra", "added")) == 1 and ("quotes", "added") in sequence["first"]
    # The new scrape file and the new version of the benchmark file: the old version stays landed
    # (history), so nothing is removed, but its state changed (superseded).
    second = [("quotes", "added"), ("vllm", "added"), ("vllm", "state")]
    assert (sequence["second_start"], sequence["second_changes"]) == ("copy", second)
    # The new version of a.csv (the old one's state changed); the removed source's file goes; c.csv
    # is rejected (no rows to load) and so not among the changes. Started from the first refresh's
    # warehouse, the build also loads the second's changes.
    third = [("extra", "removed"), ("extra", "state"), ("quotes", "added"), ("quotes", "state")]
    assert (sequence["third_start"], sequence["third_changes"]) == ("previous", sorted(second + third))
    assert any("c.csv" in f["path"] for f in sequence["third"].rejected_files)
    assert (sequence["fourth_start"], sequence["fourth_changes"]) == ("copy", [])
    # A full refresh loads every file again.
    assert ("quotes", "added") in sequence["full_changes"] and ("vllm", "added") in sequence["full_changes"]
    assert sequence["second"].rows_quarantined >= 1


def test_incremental_sequence_equals_one_full_refresh(sequence):
    differences = compare(str(sequence["incremental"]), str(sequence["full"]))
    assert differences and all(d == (0, 0) for d in differences.values()), differences
    # The history really holds every kind of row the sequence made.
    assert _raw(sequence["full"], "select count(*) from offer_history where superseded_by is not null")[0][0] >= 1
    assert _raw(sequence["full"], "select max(times_observed) from offer_history")[0][0] >= 2
    assert _raw(sequence["full"], "select count(*) from benchmark_requests")[0][0] == 200
    assert _raw(sequence["full"], "select count(*) from offer_history where source_name = 'extra'") == [(0,)]
    assert _raw(sequence["full"], "select count(*) from quarantine where source_name = 'quotes'")[0][0] >= 1


def test_incremental_refresh_recosts_a_changed_price_and_a_changed_workload(sequence):
    """The cost models are incremental per offer option: a re-scrape's changed price and a changed
    workload reach workload_costs, and the re-listed options carry the new observation time."""
    (price, observed), = sequence["rescrape_mi300x"]
    assert price == Decimal("2.2") and observed > dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=2)
    assert sequence["rescrape_observed"] == [(1,)]
    # Re-delivered: one row per content group, each observed twice.
    n = sequence["redelivered_rows"]
    assert sequence["redelivered"] == [(n, 2, 2, n)]
    assert sequence["mi325x_config_ids"] == [
        ("seed-000-mi325x-second", "seed-000-example/MI325X/1/on_demand/seed-000-mi325x-second"),
        ("seed-000-mi325x-server", "seed-000-example/MI325X/1/on_demand/seed-000-mi325x-server")]
    before, after = dict(sequence["seed_before"]), dict(sequence["seed_after"])
    assert before and before.keys() == after.keys()
    assert all(after[k] > before[k] for k in before if before[k] is not None), (before, after)


def test_raw_tables_hold_each_loaded_file_once(sequence):
    """The bookkeeping agrees with the rows: every raw row belongs to a file in raw.loaded_files."""
    for table in ("quote_observations", "benchmark_runs", "benchmark_requests", "quarantine"):
        for w in (sequence["incremental"], sequence["full"]):
            orphans = _raw(w, f"select count(*) from raw.{table} r anti join raw.loaded_files f "
                              "using (source_name, file_sha256)")
            assert orphans == [(0,)], (w, table)
    inc = "select * from raw.quote_observations except all select * from full_w.raw.quote_observations"
    with duckdb.connect(str(sequence["incremental"]), read_only=True) as con:
        con.execute(f"attach '{sequence['full']}' as full_w (read_only)")
        assert con.execute(f"select count(*) from ({inc})").fetchone() == (0,)


def test_load_key_names_the_stage_cache_entry():
    """Two outcomes of one file staged under different cache entries load as different files."""
    def outcome(entry):
        return FileOutcome("s", "quote-csv", "quote_observations", "f" * 64, "a.csv", "t", "loaded", None,
                           1, 1, 0, f"/cache/{entry}/accepted.parquet", None)
    assert load_key(outcome("k1")) == load_key(outcome("k1")) != load_key(outcome("k2"))
    rejected = FileOutcome("s", "quote-csv", "quote_observations", "f" * 64, "a.csv", "t", "rejected", "bad",
                           0, 0, 0, None, None)
    assert load_key(rejected) is None


def test_an_offer_missing_from_two_reads_of_the_same_content_is_not_listed(tmp_path):
    """is_not_listed counts reads, and a second read of unchanged content changes no file: the
    incremental build must still find the dropped offer again (NOT_LISTED), as a full build does."""
    (tmp_path / "quotes").mkdir()
    path = tmp_path / "quotes" / "a.csv"
    path.write_text(QUOTES, encoding="utf-8")
    sources = write_sources(tmp_path, [{"name": "quotes", "kind": "quotes", "format": "quote-csv",
                                        "path": "quotes/*.csv", "defaults": {"currency": "USD"}}])
    warehouse = tmp_path / "wh" / "w.duckdb"
    reasons = "select stale_reason from offers where offer_id = 'seed-000-mi325x-server'"
    _refresh(warehouse, sources)
    path.write_text("\n".join(line for line in QUOTES.splitlines() if "mi325x" not in line) + "\n", encoding="utf-8")
    _refresh(warehouse, sources)
    assert _raw(warehouse, reasons) == [(None,)]  # the grace: one read without it
    _refresh(warehouse, sources)
    assert _changes(warehouse) == []  # the same content read again: no file changed
    assert _raw(warehouse, reasons) == [("NOT_LISTED",)]
    incremental = tmp_path / "incremental.duckdb"
    shutil.copy(warehouse, incremental)
    _refresh(warehouse, sources, full=True)
    differences = compare(str(incremental), str(warehouse))
    assert differences and all(d == (0, 0) for d in differences.values()), differences


NEW_WORKLOAD = """
  - id: mixtral-fp16-added-later
    kind: inference
    description: "A workload added between two refreshes: its memory-fit requests are new"
    unit: requests
    quantity: 1000
    model_id: mixtral-8x7b
    precision: fp16
"""
NEW_STACK = ("provider,offer_id,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,billing_model,"
             "billing_granularity,rocm_version,os,kernel\n"
             "stack-cloud,stack-mi300x,MI300X,8,2.10,USD,hour,per_gpu,on_demand,hour,6.4.1,Ubuntu 22.04.5,6.8\n")


def test_models_kept_while_their_inputs_hash_holds_follow_a_new_workload_and_stack(tmp_path):
    """int_memory_requirements and int_compat_candidates keep their rows while a hash of their inputs
    is unchanged: a workload added (new memory-fit requests) and an offer declaring a new software
    stack must reach memory_fit and compat_checks in an incremental build, and their removal must take
    the rows away again, exactly as a full rebuild does."""
    (tmp_path / "quotes").mkdir()
    (tmp_path / "quotes" / "a.csv").write_text(QUOTES, encoding="utf-8")
    sources = write_sources(tmp_path, [{"name": "quotes", "kind": "quotes", "format": "quote-csv",
                                        "path": "quotes/*.csv", "defaults": {"currency": "USD"}}])
    workloads = tmp_path / "workloads.yaml"
    base = DEFAULT_WORKLOADS.read_text(encoding="utf-8")
    workloads.write_text(base, encoding="utf-8")
    warehouse = tmp_path / "wh" / "w.duckdb"
    new_fit = "select count(*) from memory_fit where workload_id = 'mixtral-fp16-added-later'"
    new_stack = "select distinct verdict from compat_checks where rocm_version = '6.4.1' and os = 'Ubuntu 22.04.5'"

    def incremental_equals_full(step: str) -> None:
        _refresh(warehouse, sources, workloads=workloads)
        assert _raw(warehouse, "select build_number from raw.build")[0][0] > 1, f"{step}: not incremental"
        incremental = tmp_path / f"{step}.duckdb"
        shutil.copy(warehouse, incremental)
        _refresh(warehouse, sources, full=True, workloads=workloads)
        differences = compare(str(incremental), str(warehouse))
        assert differences and all(d == (0, 0) for d in differences.values()), (step, differences)

    _refresh(warehouse, sources, workloads=workloads)
    assert _raw(warehouse, new_fit) == [(0,)] and _raw(warehouse, new_stack) == []
    workloads.write_text(base + NEW_WORKLOAD, encoding="utf-8")
    (tmp_path / "quotes" / "b.csv").write_text(NEW_STACK, encoding="utf-8")
    incremental_equals_full("added")
    assert _raw(warehouse, new_fit)[0][0] > 0 and _raw(warehouse, new_stack) == [("supported",)]
    workloads.write_text(base, encoding="utf-8")
    (tmp_path / "quotes" / "b.csv").unlink()
    incremental_equals_full("removed")
    assert _raw(warehouse, new_fit) == [(0,)] and _raw(warehouse, new_stack) == []


SCRAPE_HEADER = ("provider,offer_id,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,billing_model,"
                 "billing_granularity,observed_at\n")


def _scrape(offers: dict[str, tuple[str, int]], base: dt.datetime) -> str:
    """A dated scrape: offer id → (price, quarter-hours after base)."""
    return SCRAPE_HEADER + "".join(
        f"fixed-cloud,{offer},MI300X,8,{price},USD,hour,per_gpu,on_demand,hour,"
        f"{(base + dt.timedelta(minutes=15 * at)).strftime('%Y-%m-%dT%H:%M:%SZ')}\n"
        for offer, (price, at) in offers.items())


def _file_state_steps(root, base):
    """Refreshes of one warehouse through file state changes, each with a full rebuild of the same inputs beside it."""
    (root / "q").mkdir()
    sources = write_sources(root, [
        {"name": "fixed", "kind": "quotes", "format": "quote-csv", "path": "q/*.csv", "defaults": {"currency": "USD"}},
        {"name": "vllm", "kind": "benchmarks", "format": "vllm-serve", "path": "detailed/*.json"}])
    warehouse, steps = root / "wh" / "w.duckdb", {}
    p, q, r, s = (root / "q" / f"{name}.csv" for name in "pqrs")

    def step(name: str) -> None:
        # The incremental build, then a full rebuild of the same inputs and landing history in its
        # place; the chain goes on from the incremental build.
        _refresh(warehouse, sources)
        assert _raw(warehouse, "select build_number from raw.build")[0][0] > 1, f"{name}: not incremental"
        incremental = root / f"{name}.duckdb"
        shutil.copy(warehouse, incremental)
        steps[name] = {"changes": _raw(warehouse, "select source_name, file_sha256, change from raw.file_changes"),
                       "latest": dict(_raw(warehouse, "select offer_id, price_amount from intermediate.int_quote_latest"))}
        _refresh(warehouse, sources, full=True)
        steps[name]["differences"] = compare(str(incremental), str(warehouse))
        shutil.copy(incremental, warehouse)

    # A scraper that rewrites its one file (p.csv), an older file listing B (q.csv), Z in s.csv.
    first_p = _scrape({"A": ("2.00", 4), "B": ("2.10", 4), "C": ("2.20", 4)}, base)
    p.write_text(first_p, encoding="utf-8")
    # q.csv also lists C at p.csv's time: a tie that file hashes break.
    q.write_text(_scrape({"B": ("2.50", 0), "C": ("2.30", 4)}, base), encoding="utf-8")
    s.write_text(_scrape({"Z": ("3.00", 0)}, base), encoding="utf-8")
    write_json(root / "detailed" / "run.json", detailed_vllm_result(40, 2))
    _refresh(warehouse, sources)
    # p.csv's next version: A later (it beats the superseded latest), B dropped (found again: q.csv's,
    # the current file), C at the same time (a tie is found again); Z also in a new file r.csv; a new
    # version of the detailed benchmark file.
    p.write_text(_scrape({"A": ("2.05", 8), "C": ("2.20", 4)}, base), encoding="utf-8")
    r.write_text(_scrape({"Z": ("3.10", 4)}, base), encoding="utf-8")
    write_json(root / "detailed" / "run.json", detailed_vllm_result(30, 1, seed=9))
    step("new_version")
    # s.csv's next version drops Z (still listed by r.csv).
    s.write_text(_scrape({"Y": ("1.00", 8)}, base), encoding="utf-8")
    step("z_dropped_elsewhere")
    # r.csv withdrawn: Z's latest was there; the superseded s.csv version's Z counts again. The
    # detailed benchmark file withdrawn too: its requests leave.
    r_bytes = r.read_bytes()
    r.unlink()
    (root / "detailed" / "run.json").unlink()
    step("withdrawn")
    # r.csv listed again, the same bytes: its Z is current again.
    r.write_bytes(r_bytes)
    step("listed_again")
    # p.csv back to its first content: that version is current again, the second superseded.
    p.write_text(first_p, encoding="utf-8")
    step("reverted")
    return steps


@pytest.fixture(scope="module")
def file_state_steps(tmp_path_factory):
    base = dt.datetime.now(dt.timezone.utc).replace(second=0, microsecond=0) - dt.timedelta(hours=6)
    return on_one_utc_day(lambda: _file_state_steps(tmp_path_factory.mktemp("file_states"), base))


def test_each_file_state_change_equals_a_full_rebuild(file_state_steps):
    """A new version of a path, an option dropped, a withdrawn file, one listed again, a path reverted:
    after each, every public table of the incremental build equals a full rebuild's (issue #20)."""
    for name, step in file_state_steps.items():
        assert step["differences"] and all(d == (0, 0) for d in step["differences"].values()), (name, step["differences"])
    latest = {name: step["latest"] for name, step in file_state_steps.items()}
    # C ties at one time in p.csv and q.csv: which wins is the file hashes' order, as in a full build.
    assert all(step["C"] in (Decimal("2.2"), Decimal("2.3")) for step in latest.values())
    assert {k: v for k, v in latest["new_version"].items() if k != "C"} == {
        "A": Decimal("2.05"), "B": Decimal("2.5"), "Z": Decimal("3.1")}
    assert latest["withdrawn"]["Z"] == Decimal("3") and latest["listed_again"]["Z"] == Decimal("3.1")
    assert {k: v for k, v in latest["reverted"].items() if k != "C"} == {
        "A": Decimal("2"), "B": Decimal("2.1"), "Y": Decimal("1"), "Z": Decimal("3.1")}


def test_a_file_state_change_names_files_not_sources(file_state_steps):
    """A new version of a path changes the state of the version it superseded, not its whole source:
    the history models recompute what that file's rows decide (a scraper rewriting its one file
    supersedes the last version on every refresh; recomputing the source grew with its history)."""
    changes = file_state_steps["new_version"]["changes"]
    assert sorted(c for _, _, c in changes) == ["added", "added", "added", "state", "state"]
    assert all(sha is not None for _, sha, _ in changes)
