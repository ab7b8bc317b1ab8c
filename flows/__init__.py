"""Prefect flows and the ingestion pieces they call, in order."""
from provider_eval import quiet_exit

# Also in Dask/Ray worker processes, which import this package to run our tasks.
quiet_exit.install()
