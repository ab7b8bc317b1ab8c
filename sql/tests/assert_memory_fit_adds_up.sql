-- Memory-fit rows whose breakdown does not add up, or that claim a fit without headroom.
select workload_id, gpu_model, gpu_count, required_bytes_per_gpu, headroom_bytes_per_gpu, fits
from {{ ref('memory_fit') }}
where required_bytes_per_gpu <> weights_bytes_per_gpu + kv_cache_bytes_per_gpu + activation_bytes_per_gpu
        + optimizer_bytes_per_gpu + reserve_bytes_per_gpu
    or headroom_bytes_per_gpu <> available_bytes_per_gpu - required_bytes_per_gpu
    or (fits and headroom_bytes_per_gpu < 0)
    or verdict not in ('fits', 'does_not_fit', 'precision_unsupported', 'unknown')
