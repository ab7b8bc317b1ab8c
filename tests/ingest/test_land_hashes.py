"""Landing reuses the hash of an input file unchanged since an earlier refresh read it, and only then."""
import datetime as dt
import hashlib
import json
import os

from flows.ingest import land
from flows.ingest.land import HASHES_NAME, FileHashes, land_file

NOW = dt.datetime(2026, 12, 4, tzinfo=dt.timezone.utc)


def _counting(monkeypatch) -> list:
    """Every file sha256_of reads, in order."""
    read = []
    real = land.sha256_of
    monkeypatch.setattr(land, "sha256_of", lambda path: read.append(os.path.basename(path)) or real(path))
    return read


def _land(path, landing):
    hashes = FileHashes(landing / HASHES_NAME)
    landed = land_file("s", path, landing, NOW, hashes=hashes, known={})
    hashes.save()
    return landed


def test_an_unchanged_settled_file_is_not_read_again(tmp_path, monkeypatch):
    monkeypatch.setattr(land, "SETTLED_NS", 0)  # the file was written just now: count it as settled
    path, landing = tmp_path / "quotes.csv", tmp_path / "landing"
    path.write_text("offer_id\nA\n")
    read = _counting(monkeypatch)
    first = _land(path, landing)
    second = _land(path, landing)
    assert first.file_sha256 == second.file_sha256 == hashlib.sha256(b"offer_id\nA\n").hexdigest()
    assert read == ["quotes.csv"]  # hashed once, the second landing trusted the stamp


def test_a_rewritten_file_is_hashed_again_even_at_the_same_size(tmp_path, monkeypatch):
    monkeypatch.setattr(land, "SETTLED_NS", 0)
    path, landing = tmp_path / "quotes.csv", tmp_path / "landing"
    path.write_text("offer_id\nA\n")
    before = _land(path, landing)
    st = os.stat(path)
    path.write_text("offer_id\nB\n")  # same size; the modification time set back as it was
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    read = _counting(monkeypatch)
    after = _land(path, landing)
    assert read == ["quotes.csv"]  # its change time moved: the stamp differs, the bytes are read
    assert after.file_sha256 == hashlib.sha256(b"offer_id\nB\n").hexdigest() != before.file_sha256


def test_a_file_still_being_written_is_not_remembered(tmp_path, monkeypatch):
    path, landing = tmp_path / "quotes.csv", tmp_path / "landing"
    path.write_text("offer_id\nA\n")  # changed just now, within SETTLED_NS: maybe mid-write
    read = _counting(monkeypatch)
    _land(path, landing)
    _land(path, landing)
    assert read == ["quotes.csv", "quotes.csv"]


def test_an_unreadable_memory_means_hashing_everything(tmp_path, monkeypatch):
    monkeypatch.setattr(land, "SETTLED_NS", 0)
    path, landing = tmp_path / "quotes.csv", tmp_path / "landing"
    path.write_text("offer_id\nA\n")
    _land(path, landing)
    (landing / HASHES_NAME).write_text('{"' + str(path) + '": [1, 2, "not a stamp"')  # torn write
    read = _counting(monkeypatch)
    assert _land(path, landing).file_sha256 == hashlib.sha256(b"offer_id\nA\n").hexdigest()
    assert read == ["quotes.csv"]


def test_only_files_read_this_time_are_remembered(tmp_path, monkeypatch):
    monkeypatch.setattr(land, "SETTLED_NS", 0)
    landing = tmp_path / "landing"
    for name in ("a.csv", "b.csv"):
        (tmp_path / name).write_text(f"offer_id\n{name}\n")
        _land(tmp_path / name, landing)
    remembered = json.loads((landing / HASHES_NAME).read_text())
    assert list(remembered) == [str(tmp_path / "b.csv")]  # each landing saved only what it read
