"""Find the SQL models under sql/, order them by what they read, and build them as tables."""
import re
import time
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import duckdb

from provider_eval.errors import SqlModelError

LAYERS = ("staging", "intermediate", "marts")
_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)


@dataclass(frozen=True)
class SqlModel:
    """One model file: the table it builds (file stem), its layer and its select statement."""

    name: str
    layer: str
    path: Path
    sql: str


@dataclass(frozen=True)
class ModelBuild:
    """One model built: its name and how long its create-table-as took."""

    name: str
    seconds: float


@dataclass(frozen=True)
class CheckFailure:
    """A check query that returned rows: its name, how many, and a few of them."""

    name: str
    rows: int
    sample: list[tuple]


def discover(sql_dir: Path) -> list[SqlModel]:
    """All models under sql/<layer>/, in no particular order."""
    return [
        SqlModel(p.stem, layer, p, p.read_text(encoding="utf-8"))
        for layer in LAYERS for p in sorted((sql_dir / layer).glob("*.sql"))
    ]


def build_order(models: list[SqlModel]) -> list[SqlModel]:
    """Models sorted so each comes after every model its SQL mentions."""
    by_name = {m.name: m for m in models}
    if len(by_name) != len(models):
        raise SqlModelError("two SQL model files share a name")
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, by_name)) + r")\b") if by_name else None
    graph = {}
    for m in models:
        code = _COMMENT.sub(" ", m.sql)
        graph[m.name] = {d for d in pattern.findall(code) if d != m.name} if pattern else set()
    try:
        return [by_name[n] for n in TopologicalSorter(graph).static_order()]
    except CycleError as exc:
        raise SqlModelError(f"SQL models depend on each other in a cycle: {exc.args[1]}") from None


def build_models(con: duckdb.DuckDBPyConnection, sql_dir: Path) -> list[ModelBuild]:
    """Create every model as a table, in dependency order; returns each model built with its time."""
    built = []
    for model in build_order(discover(sql_dir)):
        body = model.sql.strip().rstrip(";")
        start = time.perf_counter()
        try:
            con.execute(f'create or replace table "{model.name}" as\n{body}')
        except duckdb.Error as exc:
            raise SqlModelError(f"SQL model {model.path.relative_to(sql_dir)} failed: {exc}") from None
        built.append(ModelBuild(model.name, time.perf_counter() - start))
    return built


def slowest(builds: list[ModelBuild], n: int = 3) -> str:
    """The n slowest models as 'name 1.2 s, …' for a progress line."""
    top = sorted(builds, key=lambda b: b.seconds, reverse=True)[:n]
    return ", ".join(f"{b.name} {b.seconds:.1f} s" for b in top)


def run_checks(con: duckdb.DuckDBPyConnection, sql_dir: Path) -> list[CheckFailure]:
    """Run sql/checks/*.sql; each returns offending rows, and zero rows means it passed."""
    failures = []
    for path in sorted((sql_dir / "checks").glob("*.sql")):
        body = path.read_text(encoding="utf-8").strip().rstrip(";")
        rows = con.execute(f"select * from ({body})").fetchall()
        if rows:
            failures.append(CheckFailure(path.stem, len(rows), rows[:5]))
    return failures
