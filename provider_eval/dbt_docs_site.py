"""The offline dbt docs site of a published warehouse: one static HTML file beside it, nothing fetched."""
import hashlib
import re
import tempfile
from pathlib import Path

import yaml

from provider_eval import sql_compiled, sql_layer, warehouse
from provider_eval.errors import SqlModelError
from provider_eval.paths import SQL_DIR

# A script, stylesheet, image or font from another host: `src="//…"`, `.src = "https://…"`,
# `href="…"` on a <link>, CSS `url(//…)` or `@import "https://…"`. Links a reader clicks are not loads.
_LOADS = (
    re.compile(r"""\bsrc\s*[=:]\s*(["'])((?:https?:)?//[^"']*)\1""", re.I),
    re.compile(r"""<link\b[^>]*\bhref\s*=\s*(["'])((?:https?:)?//[^"']*)\1""", re.I),
    re.compile(r"""url\(\s*(["']?)((?:https?:)?//[^"')]*)\1\s*\)""", re.I),
    re.compile(r"""@import\s+(?:url\(\s*)?(["'])((?:https?:)?//[^"']*)\1""", re.I),
)

# What the page may load: its own inline code and data: URLs, nothing from any host (nor file://).
CSP = ('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
       "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:; font-src data:\">")


def site_path(warehouse_path: Path) -> Path:
    """Where the site of a warehouse lives: dbt_docs/index.html beside it (like data_docs/)."""
    return warehouse_path.parent / "dbt_docs" / "index.html"


def external_loads(page: str) -> list[str]:
    """Every URL on another host the page would fetch by itself (empty for an offline page)."""
    return sorted({m.group(2) for pattern in _LOADS for m in pattern.finditer(page)})


def offline(page: str) -> str:
    """The page with every external load pointed at nothing, and a policy that refuses any other.

    dbt's page loads Snowplow's tracker from a CDN when the manifest allows usage statistics; we
    never allow them (sql_layer passes --no-send-anonymous-usage-stats), and the loader is removed
    too. The Content-Security-Policy makes the browser refuse whatever a later dbt adds: the page
    needs only its inline scripts and styles and data: fonts and images.
    """
    for pattern in _LOADS:
        page = pattern.sub(lambda m: m.group(0).replace(m.group(2), "about:blank"), page)
    head = re.search(r"<head[^>]*>", page, re.I)
    if head is None:
        raise SqlModelError("dbt docs generate wrote a page without <head>: cannot make it offline")
    return page[:head.end()] + CSP + page[head.end():]


def _read_only_profile(work_dir: Path, warehouse_path: Path) -> None:
    """A dbt profile on the published file, opened read-only (readers and a refresh's swap go on)."""
    sql_layer.write_profile(work_dir, warehouse_path, warehouse.BUILD_MEMORY_LIMIT, None)
    profile_file = work_dir / "profiles.yml"
    profile = yaml.safe_load(profile_file.read_text(encoding="utf-8"))
    profile["provider_eval"]["outputs"]["build"]["config_options"] = {"access_mode": "READ_ONLY"}
    profile_file.write_text(yaml.safe_dump(profile), encoding="utf-8")


def _docs_generate(sql_dir: Path, work_dir: Path, warehouse_path: Path) -> None:
    """`dbt docs generate --static` in this process, every file it writes under work_dir."""
    result = sql_layer.invoke("docs generate", sql_dir, work_dir, ["--static"],
                              manifest=sql_layer.parsed(sql_dir, work_dir, warehouse_path))
    if not result.success:
        raise SqlModelError("dbt docs generate failed: see the dbt log")


# The catalog the site shows: every table and view with its comment, every column with its type and
# comment (what dbt-duckdb's catalog reads; it has no row counts or other statistics).
CATALOG_SQL = """
select 'table', schema_name, table_name, null, null, comment from duckdb_tables() where database_name = current_database()
union all
select 'view', schema_name, view_name, null, null, comment from duckdb_views()
where database_name = current_database() and not internal
union all
select 'column', schema_name, table_name, column_index, data_type, comment from duckdb_columns()
where database_name = current_database()
order by all
"""


def _stamp(warehouse_path: Path, sql_dir: Path) -> str:
    """What a site was generated from: this version of sql/ (and dbt), this warehouse path and the
    catalog it publishes. A refresh that adds rows but changes no table or column keeps the site
    (about 4.5 s of dbt per report saved); one that changes a column or a model regenerates it."""
    with warehouse.connect_published(warehouse_path) as con:
        catalog = con.execute(CATALOG_SQL).fetchall()
    digest = hashlib.sha256(repr(catalog).encode("utf-8")).hexdigest()
    return f"{sql_compiled.tree_hash(sql_dir)} {warehouse_path.absolute()} {digest}\n"


def generate(warehouse_path: Path, sql_dir: Path = SQL_DIR) -> Path:
    """Write the site of the published warehouse (models, columns, lineage, SQL); returns its path.

    Kept when the site was generated from the same sql/ and the same catalog: a second report costs
    nothing, and a changed model or column makes the next one regenerate it.
    """
    out = site_path(warehouse_path)
    stamp_file = out.with_name(".generated-from")
    stamp = _stamp(warehouse_path, sql_dir)
    if out.is_file() and stamp_file.is_file() and stamp_file.read_text(encoding="utf-8") == stamp:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)  # before dbt runs: a folder we cannot write fails fast
    with tempfile.TemporaryDirectory(prefix="provider-eval-dbt-docs-") as tmp:
        work = Path(tmp)
        _read_only_profile(work, warehouse_path)
        _docs_generate(sql_dir, work, warehouse_path)
        page = offline((work / "target" / "static_index.html").read_text(encoding="utf-8"))
    partial = out.with_name(out.name + ".tmp")
    partial.write_text(page, encoding="utf-8")
    partial.replace(out)
    stamp_file.write_text(stamp, encoding="utf-8")
    return out
