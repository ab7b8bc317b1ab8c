"""`python -m provider_eval` runs the CLI."""
from provider_eval.cli import main

main()
