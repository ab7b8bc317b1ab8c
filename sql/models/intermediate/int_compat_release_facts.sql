-- Ephemeral (inlined into int_compat_candidates, its one reader): one dbt node fewer per build.
{{ config(materialized='ephemeral') }}
-- One row per compatibility request × ROCm release it may mean ('6.4' means every 6.4.x release;
-- none when the version is missing or unknown): every fact of AMD's matrix about that release and the
-- parsed stack (int_compat_stacks) — GPU target, OS, kernel, PyTorch, engine, driver and the per-GPU
-- OS limits of AMD's footnotes — as flags and listings; int_compat_candidates words the verdicts.
{{ compat_release_facts(ref('int_compat_stacks')) }}
