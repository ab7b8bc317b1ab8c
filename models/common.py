"""Field helpers shared by the contracts."""
import pandera.polars as pa

# Lineage columns every canonical row carries, so any row can be traced to its file and line.
class Lineage(pa.DataFrameModel):
    """Where a canonical row came from."""

    source_name: str = pa.Field(str_length={"min_value": 1})
    source_file: str
    file_sha256: str = pa.Field(str_matches=r"^[0-9a-f]{64}$")
    row_number: int = pa.Field(ge=1)

