"""provider-eval: rank rentable accelerator configurations by cost per completed workload."""
