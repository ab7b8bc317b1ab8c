"""The "Every model and what it reads" tables of docs/sql-layer.md, from dbt's manifest.

    python -m provider_eval.model_graph_docs    # rewrite the section in docs/sql-layer.md
"""
import re
import sys

from provider_eval import sql_compiled
from provider_eval.paths import PROJECT_ROOT, SQL_DIR

DOC = PROJECT_ROOT / "docs" / "sql-layer.md"
HEADING = "### Every model and what it reads\n"
LAYERS = ("staging", "intermediate", "marts")


def tables(manifest: dict) -> str:
    """One table per layer: each model (ephemeral ones marked) and the models and sources it reads."""
    nodes = {uid: n for uid, n in manifest["nodes"].items() if n["resource_type"] == "model"}
    sources = manifest["sources"]

    def name(uid: str) -> tuple[int, str]:
        if uid in sources:
            return 1, f"{sources[uid]['source_name']}.{sources[uid]['name']}"
        return 0, nodes[uid]["name"]

    out = []
    for layer in LAYERS:
        out += [f"\n{layer}:\n", "| model | reads |", "|---|---|"]
        for node in sorted((n for n in nodes.values() if n["fqn"][1] == layer), key=lambda n: n["name"]):
            label = f"`{node['name']}`" + (" (ephemeral)" if node["config"]["materialized"] == "ephemeral" else "")
            reads = ", ".join(f"`{n}`" for _, n in sorted(name(d) for d in node["depends_on"]["nodes"]))
            out.append(f"| {label} | {reads} |")
    return "\n".join(out) + "\n"


def render(text: str, manifest: dict) -> str:
    """The doc with its model tables replaced by the manifest's (up to the next `## ` heading)."""
    head, rest = text.split(HEADING, 1)
    tail = rest[re.search(r"^## ", rest, flags=re.M).start():]
    return head + HEADING + "\n" + tables(manifest) + "\n" + tail


def main(argv=None) -> int:
    """Rewrite docs/sql-layer.md's model tables (--check: exit 1 when they are stale)."""
    manifest = sql_compiled.compile_manifest(SQL_DIR)
    text = DOC.read_text(encoding="utf-8")
    new = render(text, manifest)
    if "--check" in (argv if argv is not None else sys.argv[1:]):
        return 0 if new == text else 1
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
