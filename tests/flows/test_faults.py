"""Fault trial: kill -9 at random moments mid-refresh — the published warehouse is always the old or the new one.

The other fault trials (two refreshes at once, a full disk, torn writes) are in test_faults_concurrent.py,
so `make test`'s two workers run them beside this one, the longest file of the suite.
"""
import os
import random
import signal
import time

from tests.fault_trials import alive, assert_checks_pass, fingerprint, quote_file, refresh_cmd, run_to_end, sources_with
from tests.fault_trials import refresh_env, zygote  # noqa: F401  (fixtures)

KILL_TRIALS = 20


def test_kill_9_leaves_previous_or_new_warehouse(zygote, tmp_path):
    """≥ 20 refreshes killed at random moments: the warehouse is always the old or the new one, whole."""
    warehouse = tmp_path / "wh" / "provider_eval.duckdb"
    base_sources = sources_with(tmp_path, {})
    duration_s = run_to_end(zygote, refresh_cmd(base_sources, warehouse))
    base = fingerprint(warehouse)
    rng = random.Random(11)
    outcomes = {"previous": 0, "new": 0}
    ranked_per_offer = None
    for trial in range(KILL_TRIALS):
        name = f"trial-{trial:02d}"
        sources = sources_with(tmp_path, {name: quote_file(tmp_path, name)})
        before = fingerprint(warehouse)
        new = {t: ({**v, name: 1} if t in ("offer_history", "offers", "ingest_manifest") else v)
               for t, v in base.items()}
        # The trial's one offer is ranked for as many workloads each time (learned from the first publish).
        new["rankings"] = {**base["rankings"], name: ranked_per_offer} if ranked_per_offer else base["rankings"]
        pid = zygote(refresh_cmd(sources, warehouse))
        time.sleep(rng.uniform(0, duration_s))
        if alive(pid):
            os.killpg(pid, signal.SIGKILL)
        while alive(pid):
            time.sleep(0.02)
        after = fingerprint(warehouse)
        if ranked_per_offer is None and after != before and name in after["rankings"]:
            ranked_per_offer = after["rankings"][name]
            new["rankings"] = {**base["rankings"], name: ranked_per_offer}
        assert after in (before, new), f"trial {trial}: a mixed state {after}"
        assert_checks_pass(warehouse)
        outcomes["new" if after == new else "previous"] += 1
    # The kills landed both before and after publishing (a trial that never lets the swap happen proves little).
    assert outcomes["previous"] > 0 and outcomes["new"] > 0, outcomes
    # And the refresh still works after all that debris: killed builds are swept, the landing index reads.
    run_to_end(zygote, refresh_cmd(base_sources, warehouse))
    assert fingerprint(warehouse) == base
    assert not [p for p in (warehouse.parent / ".build").iterdir()]
