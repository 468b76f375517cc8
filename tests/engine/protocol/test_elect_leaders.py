"""ElectLeaders from a raw client: an election type Kafka does not know is refused whole, as
Kafka's controller refuses it, never read as an unclean election."""
from kafka.protocol.admin import ElectLeadersRequest, ElectLeadersResponse

from tests.engine.cluster.helpers import create_topic, partition_state, start_broker, stop_broker
from tests.support.raw_client import RawClient

INVALID_REQUEST = 42


def test_an_unknown_election_type_is_invalid_request_and_elects_nobody(engine_factory, topic_name):
    engine = engine_factory(brokers=2, configs={"auto.leader.rebalance.enable": "false"})
    create_topic(engine.bootstrap, topic_name, 1, 2)
    leader, replicas, _ = partition_state(engine.bootstrap, topic_name)[0]
    follower = next(r for r in replicas if r != leader)
    stop_broker(engine, follower)       # the ISR shrinks to the leader
    stop_broker(engine, leader)         # ...which stops too: no leader
    start_broker(engine, follower)      # out of sync: only an unclean election could make it lead
    Topic = ElectLeadersRequest.TopicPartitions
    client = RawClient(engine.ports[follower])
    try:
        response = client.request(ElectLeadersRequest(election_type=2, timeout_ms=10000, topic_partitions=[
            Topic(topic=topic_name, partitions=[0])]), 2, ElectLeadersResponse)
    finally:
        client.close()
    assert response.error_code == INVALID_REQUEST
    (result,) = response.replica_election_results
    assert [(p.partition_id, p.error_code, p.error_message) for p in result.partition_result] == \
        [(0, INVALID_REQUEST, "Unknown election type 2")]
    assert partition_state(engine.bootstrap, topic_name)[0][0] == -1
