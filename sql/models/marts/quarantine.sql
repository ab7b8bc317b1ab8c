-- One row per input row that was not accepted, with the reason and the raw record kept as JSON.
with quarantined as (
    select * from {{ source('raw', 'quarantine') }}
),

final as (
    select source_name, source_file as file, file_sha256, row_number, reason_code, detail, raw_record
    from quarantined
)

select * from final
