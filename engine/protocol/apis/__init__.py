"""One module per Kafka API, named by its key. Importing this package registers them all."""
from engine.protocol.apis import (  # noqa: F401 - imported for their @api registrations
    k00_produce,
    k01_fetch,
    k02_list_offsets,
    k03_metadata,
    k18_api_versions,
    k19_create_topics,
    k20_delete_topics,
    k21_delete_records,
    k22_init_producer_id,
    k23_offset_for_leader_epoch,
    k32_describe_configs,
    k33_alter_configs,
    k37_create_partitions,
    k44_incremental_alter_configs,
    k60_describe_cluster,
)
