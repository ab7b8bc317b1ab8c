-- One row per compatibility request × ROCm release it may mean ('6.4' means every 6.4.x release;
-- none when the version is missing or unknown), with every problem found, in plain words: each fact
-- of int_compat_release_facts that makes the stack unsupported, or leaves it unknown.
{{ compat_candidates(ref('int_compat_release_facts')) }}
