-- One row per compatibility request: the verdict over every ROCm release the declared version may
-- mean (all unsupported → unsupported, all supported → supported, otherwise unknown) with every reason.
{{ compat_checks(ref('int_compat_candidates')) }}
