"""On-hardware validation: the probe that runs on the host, the SSH runner, the verdict and its evidence."""
