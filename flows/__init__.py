"""Prefect flows and the ingestion pieces they call, in order."""
