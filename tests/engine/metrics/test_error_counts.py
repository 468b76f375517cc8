"""The error codes a response carries, read as Kafka's errorCounts() reads them, whatever
form the handler answered in."""
from __future__ import annotations

from collections import Counter

from kafka.protocol.admin import DeleteAclsResponse
from kafka.protocol.consumer import FetchResponse
from kafka.protocol.metadata import MetadataResponse
from kafka.protocol.producer import ProduceResponse

from engine.metrics.error_counts import error_codes
from engine.protocol.dispatch import EncodedBody, EncodeOffLoop, ZeroCopyResponse, encode_response

T = ProduceResponse.TopicProduceResponse
P = T.PartitionProduceResponse


def produce(partitions) -> ProduceResponse:
    return ProduceResponse(throttle_time_ms=0, responses=[T(name="t", partition_responses=partitions)])


def answer(index: int, code: int) -> P:
    return P(index=index, error_code=code, base_offset=-1, log_append_time_ms=-1, log_start_offset=-1,
             record_errors=[], error_message=None)


def test_each_partition_whatever_form_its_items_take():
    objects = produce([answer(0, 0), answer(1, 3)])
    # The encoder also takes tuples (the version's untagged fields in order) and dicts.
    tuples = produce([(0, 3, -1, -1, -1, [], None), (1, 3, -1, -1, -1, [], None)])
    dicts = produce([{"index": 0, "error_code": 6}])
    assert Counter(error_codes(0, ProduceResponse, 9, objects)) == {0: 1, 3: 1}
    assert error_codes(0, ProduceResponse, 9, tuples) == [3, 3]
    assert error_codes(0, ProduceResponse, 9, dicts) == [6]
    assert error_codes(0, ProduceResponse, 9, EncodeOffLoop(objects)) == [0, 3]
    assert error_codes(0, ProduceResponse, 9, None) == []


def test_levels_where_kafka_counts_otherwise():
    R = DeleteAclsResponse.DeleteAclsFilterResult
    acl = R.DeleteAclsMatchingAcl(error_code=0, error_message=None, resource_type=2, resource_name="t",
                                  pattern_type=3, principal="User:a", host="*", operation=3, permission_type=3)
    deleted = DeleteAclsResponse(throttle_time_ms=0, filter_results=[
        R(error_code=0, error_message=None, matching_acls=[acl, acl, acl]),
        R(error_code=31, error_message=None, matching_acls=[])])
    assert sorted(error_codes(31, DeleteAclsResponse, 3, deleted)) == [0, 31]     # not the ACLs matched
    topic = MetadataResponse.MetadataResponseTopic(error_code=3, name="x", partitions=[])
    metadata = MetadataResponse(throttle_time_ms=0, brokers=[], cluster_id=None, controller_id=-1, topics=[topic])
    assert error_codes(3, MetadataResponse, 12, metadata) == [3]
    # Fetch v4-6 has no top-level code on the wire; Kafka counts its default, NONE.
    fetch = FetchResponse(throttle_time_ms=0, responses=[])
    assert error_codes(1, FetchResponse, 4, fetch) == [0]


def test_encoded_answers_are_decoded_and_a_cached_body_once():
    F = FetchResponse.FetchableTopicResponse
    partitions = [F.PartitionData(partition_index=i, error_code=3 if i % 2 else 0, high_watermark=0,
                                  last_stable_offset=0, log_start_offset=0, aborted_transactions=None,
                                  preferred_read_replica=-1, records=b"marker") for i in range(4)]
    for version in (4, 11, 12):
        fetch = FetchResponse(throttle_time_ms=0, error_code=0, session_id=0,
                              responses=[F(topic="t", partitions=partitions)])
        framed = ZeroCopyResponse(encode_response(fetch, version, 7), [], [], FetchResponse.flexible_version_q(version))
        assert Counter(error_codes(1, FetchResponse, version, framed)) == {0: 3, 3: 2}

    body = EncodedBody(body=produce([answer(0, 3)]).encode(version=9), flexible=True)
    assert error_codes(0, ProduceResponse, 9, body) == [3]
    body.body[:] = b""                        # a second answer of the same body is not decoded again
    assert error_codes(0, ProduceResponse, 9, body) == [3]
