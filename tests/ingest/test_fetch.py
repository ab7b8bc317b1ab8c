"""url sources: downloads from a real loopback HTTP server, retries, truncation, timeouts, secrets."""
import hashlib

import pytest

from flows.ingest.fetch import FetchPolicy, fetch
from provider_eval.paths import DATA_DIR
from tests.conftest import query, run_refresh, write_sources
from tests.http_fixture_server import SECRET, FixtureServer

REAL = DATA_DIR / "samples" / "quotes" / "catalogs"
FAST = FetchPolicy(read_timeout_s=0.5, deadline_s=5, attempts=3, backoff_s=0.05)


@pytest.fixture(scope="module")
def server():
    srv = FixtureServer({"do.json": REAL / "digitalocean_v2_sizes.json",
                         "metal.json": REAL / "vultr_v2_plans_metal.json",
                         "hotaisle.json": REAL / "hotaisle_available_vms.json",
                         "runpod.json": REAL / "runpod_gputypes.json"})
    yield srv
    srv.stop()


def test_ok_body_lands_byte_for_byte(server, tmp_path):
    result = fetch(server.url("ok", "do.json"), tmp_path / "b.json", policy=FAST)
    assert result.reason is None and result.attempts == 1
    assert result.body_path.read_bytes() == (REAL / "digitalocean_v2_sizes.json").read_bytes()
    assert result.sha256 == hashlib.sha256(result.body_path.read_bytes()).hexdigest()


def test_429_is_retried_after_retry_after(server, tmp_path):
    waits = []
    result = fetch(server.url("flaky", "metal.json"), tmp_path / "b.json", policy=FAST, sleep=waits.append)
    assert result.reason is None and result.attempts == 2
    assert waits == [1.0]  # the server's Retry-After, not our backoff


def test_500_forever_gives_up_with_backoff(server, tmp_path):
    waits = []
    result = fetch(server.url("down", "do.json"), tmp_path / "b.json", policy=FAST, sleep=waits.append)
    assert result.body_path is None and result.attempts == 3
    assert result.reason == "HTTP_ERROR: HTTP 500 from http://127.0.0.1:%d/down/do.json (after 3 attempts)" \
        % server.httpd.server_port
    assert waits == [0.05, 0.1]


def test_404_and_401_are_not_retried(server, tmp_path):
    for url in (server.url("ok", "missing.json"), server.url("auth", "runpod.json")):
        result = fetch(url, tmp_path / "b.json", policy=FAST, sleep=lambda s: pytest.fail("retried"))
        assert result.attempts == 1 and result.reason.startswith("HTTP_ERROR: HTTP 4")


def test_truncated_body_is_rejected(server, tmp_path):
    result = fetch(server.url("truncated", "do.json"), tmp_path / "b.json", policy=FAST)
    assert result.body_path is None and result.reason.startswith("TRUNCATED:")
    assert not (tmp_path / "b.json").exists()


def test_slow_body_times_out(server, tmp_path):
    result = fetch(server.url("slow", "do.json"), tmp_path / "b.json", policy=FAST)
    assert result.body_path is None and result.reason.startswith("FETCH_TIMEOUT:")


def test_size_cap(server, tmp_path):
    small = FetchPolicy(max_bytes=100, attempts=1)
    result = fetch(server.url("ok", "do.json"), tmp_path / "b.json", policy=small)
    assert result.reason.startswith("TOO_LARGE:")


def test_bearer_token_is_sent(server, tmp_path):
    result = fetch(server.url("auth", "runpod.json"), tmp_path / "b.json", token=SECRET, policy=FAST)
    assert result.reason is None


def test_refresh_survives_bad_days_and_keeps_previous_observations(server, tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("RUNPOD_TEST_TOKEN", SECRET)
    fast = {"timeout_s": 0.5, "attempts": 2, "backoff_s": 0.05}
    entries = [
        {"name": "do", "kind": "quotes", "format": "digitalocean-sizes", "url": server.url("ok", "do.json"),
         "defaults": {"provider": "digitalocean"}, "fetch": fast},
        {"name": "vultr", "kind": "quotes", "format": "vultr-plans", "url": server.url("flaky", "metal.json"),
         "defaults": {"provider": "vultr"}, "fetch": fast},
        {"name": "hotaisle", "kind": "quotes", "format": "hotaisle-available",
         "url": server.url("truncated", "hotaisle.json"), "defaults": {"provider": "hotaisle"}, "fetch": fast},
        {"name": "runpod", "kind": "quotes", "format": "runpod-gputypes", "url": server.url("auth", "runpod.json"),
         "auth_env": "RUNPOD_TEST_TOKEN", "defaults": {"provider": "runpod"}, "fetch": fast},
        {"name": "slow", "kind": "quotes", "format": "digitalocean-sizes", "url": server.url("slow", "do.json"),
         "defaults": {"provider": "slowcloud"}, "fetch": fast},
        {"name": "broken", "kind": "quotes", "format": "digitalocean-sizes", "url": server.url("down", "do.json"),
         "defaults": {"provider": "brokencloud"}, "fetch": fast},
        {"name": "vault", "kind": "quotes", "format": "runpod-gputypes", "url": server.url("auth", "runpod.json"),
         "auth_env": "UNSET_TEST_TOKEN_VAR", "defaults": {"provider": "runpod2"}},
    ]
    sources = write_sources(tmp_path, entries)
    warehouse = tmp_path / "w.duckdb"
    state = run_refresh(warehouse, sources)
    assert state.is_completed(), state.message
    manifest = {r[0]: r[1:] for r in query(warehouse, "select source_name, status, split_part(reason, ':', 1), "
                                                      "original_path from ingest_manifest")}
    assert {k: v[:2] for k, v in manifest.items()} == {
        "do": ("loaded", None), "vultr": ("loaded", None), "runpod": ("loaded", None),
        "hotaisle": ("rejected", "TRUNCATED"), "slow": ("rejected", "FETCH_TIMEOUT"),
        "broken": ("rejected", "HTTP_ERROR"), "vault": ("rejected", "AUTH_MISSING")}
    assert manifest["do"][2] == server.url("ok", "do.json")
    # The run's summary says what each source did, for a scheduler or an operator.
    summary = state.result()
    assert summary.sources["do"]["fetch"] == "ok" and summary.sources["do"]["loaded"] == 1
    assert summary.sources["slow"] == {"files": 1, "loaded": 0, "rejected": 1, "rows_in": 0, "rows_accepted": 0,
                                       "rows_quarantined": 0, "fetch": "failed"}
    assert {f["source"] for f in summary.failed_fetches} == {"hotaisle", "slow", "broken", "vault"}
    assert summary.rejected_files == []
    offers = set(query(warehouse, "select provider, billing_model, round(usd_per_gpu_hour, 2)::varchar from offers"))
    assert {("digitalocean", "on_demand", "1.99"), ("vultr", "spot", "1.84"),
            ("runpod", "on_demand", "2.49")} <= offers

    # A bad day for DigitalOcean: its previous observations stay; the manifest says why nothing new came.
    server.replace("do.json", b'{"sizes": [')
    entries[0]["url"] = server.url("down", "do.json")
    state = run_refresh(warehouse, write_sources(tmp_path, entries))
    assert state.is_completed(), state.message
    assert ("digitalocean", "on_demand", "1.99") in set(
        query(warehouse, "select provider, billing_model, round(usd_per_gpu_hour, 2)::varchar from offers"))
    assert query(warehouse, "select count(*) from offer_history where provider = 'digitalocean'")[0][0] == 2
    assert ("do", "rejected") in set(query(warehouse, "select source_name, status from ingest_manifest"))

    # The token never reaches the warehouse or the logs.
    assert SECRET.encode() not in warehouse.read_bytes()
    out, err = capfd.readouterr()
    assert SECRET not in out + err


@pytest.mark.parametrize("extra, message", [
    ("    url: ftp://example.com/x.json\n", "url must be an http(s) address"),
    ("    url: https://user:pw@example.com/x.json\n", "must not embed credentials"),
    ("    url: https://example.com/x.json\n    path: x.json\n", "either 'path' or 'url'"),
    ("    url: https://example.com/x.json\n    auth_env: sk-live-abc123\n", "environment variable NAME"),
    ("    url: https://example.com/x.json\n    fetch: {retries: 3}\n", "'fetch' may set only"),
    ("    url: https://example.com/x.json\n    fetch: {timeout_s: -1}\n", "fetch.timeout_s must be a number"),
    ("    path: x.json\n    auth_env: VULTR_API_KEY\n", "'auth_env' applies only to a 'url' source"),
])
def test_url_source_mistakes(tmp_path, extra, message):
    from flows.ingest.sources import load_sources
    from provider_eval.errors import ConfigError

    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n  - name: a\n    kind: quotes\n    format: vultr-plans\n" + extra, encoding="utf-8")
    with pytest.raises(ConfigError, match="line 2") as err:
        load_sources(path)
    assert message in str(err.value)


def test_url_source_is_read(tmp_path):
    from flows.ingest.fetch_sources import policy_for
    from flows.ingest.sources import load_sources

    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n  - name: a\n    kind: quotes\n    format: vultr-plans\n"
                    "    url: https://api.vultr.com/v2/plans-metal\n    auth_env: VULTR_API_KEY\n"
                    "    fetch: {timeout_s: 5, attempts: 2}\n", encoding="utf-8")
    (source,) = load_sources(path)
    assert (source.url, source.auth_env, source.files()) == ("https://api.vultr.com/v2/plans-metal", "VULTR_API_KEY", [])
    policy = policy_for(source)
    assert (policy.read_timeout_s, policy.attempts, policy.max_bytes) == (5.0, 2, 64 * 2**20)


def test_a_fetch_that_raises_is_retried_by_prefect_then_rejected_not_fatal(server, tmp_path, monkeypatch):
    """Beyond HTTP (handled inside fetch()): an exception (disk, bug) gets the task's retries, then a row."""
    import flows.stage_inputs as stage_inputs

    calls = []

    def broken(source, downloads_dir, now):
        calls.append(source.name)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(stage_inputs, "fetch_url_source", broken)
    monkeypatch.setattr(stage_inputs.fetch_source, "retry_delay_seconds", [0.1, 0.1])
    sources = write_sources(tmp_path, [
        {"name": "do", "kind": "quotes", "format": "digitalocean-sizes", "url": server.url("ok", "do.json"),
         "defaults": {"provider": "digitalocean"}},
        {"name": "seed", "kind": "quotes", "format": "quote-csv", "defaults": {"currency": "USD"},
         "path": str(DATA_DIR / "samples" / "quotes" / "seed_000_example.csv")}])
    state = run_refresh(tmp_path / "w.duckdb", sources)
    assert state.is_completed(), state.message
    assert calls == ["do", "do", "do"]  # the first try and two retries
    [(status, reason)] = query(tmp_path / "w.duckdb", "select status, reason from ingest_manifest where source_name = 'do'")
    assert status == "rejected" and reason.startswith("FETCH_FAILED: OSError") and "No space left" in reason
    assert state.result().sources["seed"]["loaded"] == 1
