"""int_offer_market_peers: leave-one-out peer medians from ranks (O(n log n)) give exactly what the
self-join of every offer with every peer gave, and 50,000 offers of one GPU model build within the
build's memory limit (issue 23: 5,000 ran out of memory).

Measured here (2 cores, 1 GB limit): 5,000 offers of one model, self-join out of memory after 24 s,
ranks 0.06 s; 50,000 offers, ranks ~1 s."""
import random
import time

import duckdb
import pytest

from provider_eval.paths import SQL_DIR
from provider_eval.warehouse import BUILD_MEMORY_LIMIT

PEERS = (SQL_DIR / "intermediate" / "int_offer_market_peers.sql").read_text(encoding="utf-8")
OFFERS = (SQL_DIR / "marts" / "offers.sql").read_text(encoding="utf-8")

# The definition, as offers.sql computed it before (a self-join per GPU model): the reference.
SELF_JOIN = """
with latest as (select * from int_quote_latest),
peer_prices as (
    select o.source_name, o.provider, o.offer_id, o.billing_model, o.tier, o.commitment_term_hours,
        median(p.usd_per_gpu_hour) filter (where p.gpus_per_node = 1) as single_gpu_peer_usd,
        median(p.usd_per_gpu_hour) as any_peer_usd
    from latest as o join latest as p
        on p.provider = o.provider and p.gpu_model = o.gpu_model and p.billing_model = o.billing_model
        and p.offer_id != o.offer_id
    group by all),
market_prices as (
    select o.source_name, o.provider, o.offer_id, o.billing_model, o.tier, o.commitment_term_hours,
        count(p.usd_per_gpu_hour) as market_peers,
        median(ln(p.usd_per_gpu_hour::double)) as market_median_ln_usd,
        1.4826 * mad(ln(p.usd_per_gpu_hour::double)) as market_sd_ln_usd,
        median(p.usd_per_gpu_hour::double) as market_median_usd
    from latest as o join latest as p
        on p.gpu_model = o.gpu_model and p.billing_model = o.billing_model
        and not (p.source_name = o.source_name and p.provider = o.provider and p.offer_id = o.offer_id
            and p.tier is not distinct from o.tier
            and p.commitment_term_hours is not distinct from o.commitment_term_hours)
    where o.usd_per_gpu_hour > 0 and p.usd_per_gpu_hour > 0
    group by all)
select l.source_name, l.provider, l.offer_id, l.billing_model, l.tier, l.commitment_term_hours,
    pp.single_gpu_peer_usd, pp.any_peer_usd, mp.market_peers, mp.market_median_ln_usd,
    mp.market_sd_ln_usd, mp.market_median_usd
from latest as l
left join peer_prices as pp
    on pp.source_name = l.source_name and pp.provider = l.provider and pp.offer_id = l.offer_id
    and pp.billing_model = l.billing_model and pp.tier is not distinct from l.tier
    and pp.commitment_term_hours is not distinct from l.commitment_term_hours
left join market_prices as mp
    on mp.source_name = l.source_name and mp.provider = l.provider and mp.offer_id = l.offer_id
    and mp.billing_model = l.billing_model and mp.tier is not distinct from l.tier
    and mp.commitment_term_hours is not distinct from l.commitment_term_hours
"""


def _differences(con, a: str, b: str) -> tuple[int, int]:
    """Rows of a not in b and of b not in a, duplicates counted (EXCEPT ALL both ways)."""
    return (con.execute(f"select count(*) from (({a}) except all ({b}))").fetchone()[0],
            con.execute(f"select count(*) from (({b}) except all ({a}))").fetchone()[0])


def _random_latest(con, seed: int) -> None:
    """Offers with ties, repeated offer ids across sources and tiers, null and zero prices."""
    r = random.Random(seed)
    n = r.randrange(1, 80)
    rows = {}
    for _ in range(n):
        key = (r.choice(["s1", "s2"]), r.choice(["p1", "p2", "p3"]), f"o{r.randrange(n // 2 + 1)}",
               r.choice(["on_demand", "spot"]), r.choice([None, "secure"]), r.choice([None, 8760]))
        price = r.choice([None, 0, 1.99, 1.99, 2.49, 3.45, 0.95, round(r.uniform(0.5, 20), r.choice([2, 6]))])
        rows[key] = (*key, r.choice(["MI300X", "MI325X"]), r.choice([1, 8]), price)
    con.execute("""create or replace table int_quote_latest (source_name varchar, provider varchar,
        offer_id varchar, billing_model varchar, tier varchar, commitment_term_hours decimal(18, 6),
        gpu_model varchar, gpus_per_node integer, usd_per_gpu_hour decimal(18, 6))""")
    con.executemany("insert into int_quote_latest values (?, ?, ?, ?, ?, ?, ?, ?, ?)", list(rows.values()))


@pytest.mark.parametrize("seed", range(40))
def test_same_rows_as_the_self_join_on_random_offers(seed):
    con = duckdb.connect()
    _random_latest(con, seed)
    assert _differences(con, PEERS, SELF_JOIN) == (0, 0)


@pytest.fixture
def sample_tables(sample_warehouse):
    """An in-memory database holding the bundled refresh's offer inputs."""
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    con.execute(f"attach '{sample_warehouse}' as sample (read_only)")
    for table in ("int_quote_latest", "int_offer_checklist", "ref_price_bands"):
        con.execute(f"create table {table} as select * from sample.{table}")
    return con


def test_offers_identical_to_the_self_join_on_the_bundled_data(sample_tables):
    con = sample_tables
    built = {}
    for name, peers in (("self_join", SELF_JOIN), ("ranks", PEERS)):
        con.execute(f"create or replace table int_offer_market_peers as {peers}")
        con.execute(f"create table offers_{name} as {OFFERS}")
        built[name] = f"select * from offers_{name}"
    assert con.execute("select count(*) from offers_ranks").fetchone()[0] > 30
    assert _differences(con, built["self_join"], built["ranks"]) == (0, 0)
    # The flags the peers decide are really exercised by the bundled data.
    assert con.execute("select count(*) from offers_ranks where list_contains(warnings, 'PRICE_OUTLIER')"
                       ).fetchone()[0] == 1


def test_fifty_thousand_offers_of_one_gpu_model_build_within_the_memory_limit(sample_tables, tmp_path):
    con = sample_tables
    con.execute(f"set memory_limit = '{BUILD_MEMORY_LIMIT}'")
    con.execute(f"set temp_directory = '{tmp_path}'")
    # One marketplace listing 50,000 single-GPU MI300X offers (prices 1.00-3.99 $/GPU-h, many ties),
    # beside the bundled offers: both the provider and the market peer groups hold 50,000.
    con.execute("""insert into int_quote_latest
        select q.* replace ('marketplace' as provider, 'market-' || i as offer_id, 'market' as source_name,
            (1 + (i * 7919 % 300) / 100)::decimal(18, 6) as usd_per_gpu_hour)
        from int_quote_latest as q, range(50000) as t(i)
        where q.source_name = 'public-price-points' and q.offer_id = 'hotaisle-mi300x-1'""")
    start = time.perf_counter()
    con.execute(f"create or replace table int_offer_market_peers as {PEERS}")
    con.execute(f"create table offers as {OFFERS}")
    seconds = time.perf_counter() - start
    assert con.execute("select count(*) from offers where provider = 'marketplace'").fetchone()[0] == 50_000
    # Leave-one-out over 50,000 prices: each offer has 49,999 market peers of the same model.
    expected = con.execute("""select count(*) - 1 from int_quote_latest where gpu_model = 'MI300X'
                              and billing_model = 'on_demand' and usd_per_gpu_hour > 0""").fetchone()[0]
    assert expected > 50_000
    stats = con.execute("""select min(market_peers), max(market_peers), min(any_peer_usd), max(any_peer_usd)
                           from int_offer_market_peers where provider = 'marketplace'""").fetchone()
    assert stats[:2] == (expected, expected)
    assert 1 <= stats[2] <= stats[3] <= 3.99
    assert seconds < 60, f"{seconds:.1f} s"
