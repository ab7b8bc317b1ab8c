-- Ephemeral (inlined into int_compat_release_facts, its one reader): one dbt node fewer per build.
{{ config(materialized='ephemeral') }}
-- One row per compatibility request (int_compat_requests) with its free-text stack read into what the
-- ROCm matrix is keyed by: the declared ROCm version without '.x', the OS family and release, the
-- kernel's and PyTorch's major.minor, and the GPU's vendor, gfx target and first ROCm release.
-- Requests come from offers or from check-compat's one-row input, so the parsing lives here, on the
-- request, and both read the same rules.
{{ compat_stacks(ref('int_compat_requests')) }}
