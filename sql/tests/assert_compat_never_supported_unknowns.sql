-- Compatibility rows that say "supported" for a stack with a missing or unknown part, or that give
-- a verdict without a reason.
select c.gpu_model, c.rocm_version, c.os, c.verdict, c.reasons
from {{ ref('compat_checks') }} as c
left join {{ source('ref', 'gpus') }} as g on g.gpu_model = c.gpu_model
where c.verdict not in ('supported', 'unsupported', 'unknown')
    or len(c.reasons) = 0
    or (c.verdict = 'supported' and (c.rocm_version is null or c.os is null or g.gpu_model is null))
