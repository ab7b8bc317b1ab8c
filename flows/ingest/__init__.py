"""Ingestion: declared sources → landed files → parsed, validated, staged frames."""
