-- One row per current offer × billing option: seed 000's procurement checklist, each item
-- 'verified' (the offer's latest on-hardware validation passed and the probe measures it), 'known'
-- (the quote states it, or the warehouse holds the evidence) or 'missing'.
with latest as (
    select * from {{ ref('int_quote_latest') }}
),

validations as (
    -- Only the offer's newest validation counts, as in ranking; a pass means every check passed.
    select offer_id, validation_id, gemm_bf16_8192_tflops
    from {{ ref('int_latest_validations') }}
    where verdict = 'pass'
),

runs as (
    -- The distinct configurations measured (hundreds), not every run (400k at the bench's default
    -- scale): each offer's two EXISTS below then probe a small table (0.95 s → see docs/benchmark.md).
    select distinct provider, gpu_model, gpu_count, source_name like 'validation-benchmarks-%' as is_validation_run
    from {{ ref('int_current_benchmark_runs') }}
),

facts as (
    select
        l.offer_option_id, l.source_name, l.provider, l.offer_id, l.billing_model, l.tier, l.commitment_term_hours,
        l.gpus_per_node,
        v.validation_id is not null as passed_validation,
        v.gemm_bf16_8192_tflops is not null as probe_ran_torch,
        l.virtualisation is not null as states_virtualisation,
        l.rocm_version is not null as states_rocm,
        l.software_tested is not null as states_software,
        l.interconnect is not null as states_interconnect,
        (l.cpu_model is not null or l.cpu_cores is not null) and l.system_ram_bytes is not null
            as states_cpu_ram,
        l.nvme_bytes is not null as states_nvme,
        l.network_gbps is not null as states_network,
        l.usd_per_node_hour is not null and l.cost_lines_stated as states_total_cost,
        -- A run of this GPU model at this GPU count, generic or by this provider.
        exists (
            select 1 from runs as r
            where r.gpu_model = l.gpu_model and r.gpu_count = l.gpus_per_node
                and (r.provider is null or r.provider = l.provider)
        ) as has_benchmark,
        -- A run that validate-host measured on this provider's host of this configuration.
        exists (
            select 1 from runs as r
            where r.is_validation_run
                and r.gpu_model = l.gpu_model and r.gpu_count = l.gpus_per_node
                and r.provider = l.provider
        ) as has_validation_benchmark
    from latest as l
    left join validations as v on v.offer_id = l.offer_id
),

statuses as (
    select
        offer_option_id, source_name, provider, offer_id, billing_model, tier, commitment_term_hours,
        -- The quote always names the GPU (an alias of a catalog model); the probe identifies it by PCI id.
        case when passed_validation then 'verified' else 'known' end as check_accelerator,
        -- The probe measures VRAM per physical GPU and the partition mode (a pass means whole, SPX GPUs).
        case when passed_validation then 'verified' when states_virtualisation then 'known' else 'missing' end
            as check_memory_virtualisation,
        -- A pass includes the measured ROCm/OS/kernel/PyTorch stack going through compat_checks.
        case when passed_validation then 'verified' when states_rocm then 'known' else 'missing' end
            as check_rocm,
        -- Verified only when the probe's PyTorch actually ran a kernel (the bf16 GEMM was measured).
        case when passed_validation and probe_ran_torch then 'verified'
            when states_software then 'known' else 'missing' end as check_software_stack,
        -- A single GPU has no GPU-to-GPU topology to check; a pass means no disabled XGMI link.
        case when passed_validation and gpus_per_node > 1 then 'verified'
            when states_interconnect or gpus_per_node = 1 then 'known' else 'missing' end as check_topology,
        -- The probe does not measure CPU, system RAM, disks, network or prices: known or missing only.
        case when states_cpu_ram then 'known' else 'missing' end as check_cpu_ram,
        case when states_nvme then 'known' else 'missing' end as check_nvme,
        case when states_network then 'known' else 'missing' end as check_network,
        case when states_total_cost then 'known' else 'missing' end as check_total_cost,
        case when passed_validation and has_validation_benchmark then 'verified'
            when has_benchmark then 'known' else 'missing' end as check_benchmark
    from facts
),

final as (
    select
        *,
        list_filter([
            case when check_accelerator = 'missing' then 'accelerator' end,
            case when check_memory_virtualisation = 'missing' then 'memory_virtualisation' end,
            case when check_rocm = 'missing' then 'rocm' end,
            case when check_software_stack = 'missing' then 'software_stack' end,
            case when check_topology = 'missing' then 'topology' end,
            case when check_cpu_ram = 'missing' then 'cpu_ram' end,
            case when check_nvme = 'missing' then 'nvme' end,
            case when check_network = 'missing' then 'network' end,
            case when check_total_cost = 'missing' then 'total_cost' end,
            case when check_benchmark = 'missing' then 'benchmark' end
        ], lambda x: x is not null) as checklist_missing
    from statuses
)

select * from final
