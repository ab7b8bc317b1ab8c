"""The refresh's imports run without cyclic collections, and what they create is frozen out of later ones."""
import gc

from provider_eval import gc_pause


def test_imports_run_without_collections_and_their_objects_are_frozen():
    gc.unfreeze()
    try:
        with gc_pause.importing():
            assert not gc.isenabled()
            made = [[i] for i in range(1000)]  # what an import leaves alive
        assert gc.isenabled() and gc.get_freeze_count() >= len(made)
    finally:
        gc.unfreeze()


def test_a_disabled_collector_stays_disabled():
    gc.disable()
    try:
        with gc_pause.importing():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
