"""Land input files in a content-addressed store: the raw bytes are kept, named by their sha256."""
import datetime as dt
import hashlib
import json
import os
import shutil
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

from provider_eval.safe_paths import child

INDEX_NAME = "index.jsonl"
HASHES_NAME = "file-hashes.json"
# A file changed this recently may still be being written (a scraper mid-file), and a rewrite within
# the file system's timestamp tick would keep its times: its hash is used but not remembered.
SETTLED_NS = 2 * 10**9


@dataclass(frozen=True)
class LandedFile:
    """One landed file: its content hash, where its bytes are kept, and where they came from."""

    source_name: str
    file_sha256: str
    landed_path: str
    original_path: str
    first_seen_at: str  # ISO-8601 UTC
    # Companion files landed with this one: [{"original_path", "landed_path", "file_sha256"}].
    companions: tuple = ()


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in chunks so large files stay out of memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_stamp(path: Path) -> list[int]:
    """What changes whenever a file's bytes do: size, modification and change times, inode, device."""
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


class FileHashes:
    """sha256 of input files by path, reused while a file's size, times, inode and device are unchanged.

    Landing hashed every declared file on every refresh: 1.9 GB of history at the bench's default
    scale, re-read each time to land one new file. A file's change time (ctime) cannot be set back
    by a user, so an unchanged stamp means unchanged bytes, as git's index trusts it; a file changed
    within SETTLED_NS of being hashed is hashed again next time. Only the files read this time are
    remembered (the store does not grow with files that are gone).
    """

    def __init__(self, store: Path):
        self._store = store
        try:
            known = json.loads(store.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            known = {}  # none yet, or unreadable: every file is hashed, as without it
        self._known = known if isinstance(known, dict) else {}
        self._used: dict[str, list] = {}

    def sha256(self, path: Path) -> str:
        """The file's sha256: remembered when its stamp is the one it was hashed with, else read."""
        key = os.path.abspath(path)
        before = file_stamp(path)
        entry = self._known.get(key)
        if isinstance(entry, list) and len(entry) == 6 and entry[:5] == before and isinstance(entry[5], str):
            self._used[key] = entry
            return entry[5]
        sha = sha256_of(path)
        settled = time.time_ns() - max(before[1], before[2]) > SETTLED_NS
        if settled and file_stamp(path) == before:  # not changed while it was read
            self._used[key] = [*before, sha]
        return sha

    def save(self) -> None:
        """Write what was remembered this time (a whole new file, renamed into place)."""
        self._store.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._store.with_name(f".{self._store.name}.{uuid.uuid4().hex}")
        tmp.write_text(json.dumps(self._used), encoding="utf-8")
        os.replace(tmp, self._store)


def read_index(landing_dir: Path) -> list[LandedFile]:
    """Every file ever landed in this store, oldest first."""
    index = landing_dir / INDEX_NAME
    if not index.exists():
        return []
    with open(index, encoding="utf-8") as fh:
        lines = fh.readlines()
    # A refresh killed mid-append leaves a last line without its newline: that entry never
    # finished, so it is skipped (its file is landed again next time).
    if lines and not lines[-1].endswith("\n"):
        lines = lines[:-1]
    return [_from_json(json.loads(line)) for line in lines if line.strip()]


def read_index_by_key(landing_dir: Path) -> dict[tuple[str, str], LandedFile]:
    """The index keyed by (source name, sha256): the first landing of each content per source."""
    out: dict[tuple[str, str], LandedFile] = {}
    for lf in read_index(landing_dir):
        out.setdefault((lf.source_name, lf.file_sha256), lf)
    return out


def _from_json(record: dict) -> LandedFile:
    record["companions"] = tuple(record.get("companions") or ())
    return LandedFile(**record)


def _land_companion(source_name: str, path: Path, landing_dir: Path, hashes: FileHashes | None = None) -> dict:
    """Store a companion file's bytes by hash (no index entry of its own: it is never staged alone)."""
    sha = hashes.sha256(path) if hashes else sha256_of(path)
    target = child(landing_dir, source_name, "companions", f"{sha}{''.join(path.suffixes[-1:])[:16]}")
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".part")
        shutil.copyfile(path, tmp)
        os.replace(tmp, target)
    return {"original_path": str(path), "landed_path": str(target), "file_sha256": sha}


def land_file(source_name: str, path: Path, landing_dir: Path, now: dt.datetime,
              companions: list[Path] = (), original: str | None = None,
              known: dict | None = None, hashes: FileHashes | None = None) -> LandedFile:
    """Copy one file into the store (once per content) and record it in the index.

    Companions are landed with the file the first time its content is seen; the index entry
    keeps them, so a replay from the landing store reads the same companion bytes.
    `original` names where the bytes came from when that is not `path` (a downloaded URL).
    `known` is the index as read_index_by_key returns it, kept up to date here: landing many files
    then reads the index once, not once per file (2,000 files read it 2,000 times). `hashes` reuses
    the hash of a file unchanged since an earlier refresh read it.
    """
    sha = hashes.sha256(path) if hashes else sha256_of(path)
    origin = original or str(path)
    # The vendor's file name stays data only: the stored name is the hash (no path traversal).
    target = child(landing_dir, source_name, f"{sha}{''.join(path.suffixes[-2:])[:16]}")
    index = read_index_by_key(landing_dir) if known is None else known
    seen = index.get((source_name, sha))
    if seen is not None:
        return LandedFile(source_name, sha, seen.landed_path, origin, seen.first_seen_at, seen.companions)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".part")
    try:
        shutil.copyfile(path, tmp)
        os.replace(tmp, target)
    except OSError:
        tmp.unlink(missing_ok=True)  # a half copy (e.g. disk full) must not keep holding the space
        raise
    landed = LandedFile(source_name, sha, str(target), origin, now.isoformat(),
                        tuple(_land_companion(source_name, c, landing_dir, hashes) for c in companions))
    _append_line(landing_dir / INDEX_NAME, json.dumps(asdict(landed)) + "\n")
    index.setdefault((source_name, sha), landed)
    return landed


def _append_line(index: Path, line: str) -> None:
    """Append one index line in a single write, first cutting off a torn line a killed refresh left."""
    fd = os.open(index, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            os.ftruncate(fd, os.pread(fd, size, 0).rfind(b"\n") + 1)
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def verify_landed(landed: LandedFile) -> str | None:
    """Why a landed file (or a companion) no longer holds the bytes it was landed with, or None.

    A changed copy is put back from its original path when that still has the landed content;
    otherwise the file must not be staged (a tampered landing store is never published).
    """
    parts = [(landed.landed_path, landed.file_sha256, landed.original_path)]
    parts += [(c["landed_path"], c["file_sha256"], c["original_path"]) for c in landed.companions]
    for landed_path, sha, original in parts:
        target = Path(landed_path)
        if _has_sha(target, sha):
            continue
        source = Path(original)
        if "://" not in original and _has_sha(source, sha):
            tmp = target.with_name(target.name + ".part")
            shutil.copyfile(source, tmp)
            os.replace(tmp, target)
            if _has_sha(target, sha):
                continue
        return f"{target.name} in the landing store no longer has sha256 {sha[:12]}… (changed or missing)"
    return None


def _has_sha(path: Path, sha: str) -> bool:
    try:
        return sha256_of(path) == sha
    except OSError:
        return False
