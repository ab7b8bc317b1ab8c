"""The quality gate: great-expectations suites on the built marts, before publish."""
