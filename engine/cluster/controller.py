"""The controller: the single owner and writer of cluster metadata.

Every change is validated here, written to the metadata journal (fsync'd), then applied
to the image and announced to the brokers' listeners. Brokers read the image; they never
change it.

The active controller is the lowest live broker (`elect_controller`); each election raises
the controller epoch, which every announcement carries, and brokers ignore an older one.
Stopped brokers are fenced: they lose their leaderships and ISR memberships
(`fence_broker`), and get them back by catching up once unfenced. Partition decisions
(elections, ISR changes, reassignments) are computed in replication_control.py. Topic changes
(CreateTopics, CreatePartitions, DeleteTopics) are validated and built in topic_changes.py.
Gaps: no Raft quorum - the engine is one process, so the journal is the single source.
"""
from __future__ import annotations

import logging
import random
import uuid
from pathlib import Path
from typing import Any, Callable

import kafka.errors as Errors

from engine.cluster import acl_records as ACL
from engine.cluster import client_quotas as CQ
from engine.cluster import scram_credentials as SC
from engine.cluster import journal_format as F
from engine.cluster import records as R
from engine.cluster import replication_control as RC
from engine.cluster import state_machines as SM
from engine.cluster.journal import MetadataCorruptError, MetadataJournal
from engine.cluster.metadata import MetadataImage, TopicState
from engine.cluster import internal_topics, slices
from engine.cluster.topic_changes import TopicChanges
from engine.config import BrokerConfig, InvalidConfigError, validate_topic_configs
from engine.coordinator.group_configs import validate_group_configs
from engine.dynamic_config import validate_dynamic_broker_configs
from engine.errors import ApiError

log = logging.getLogger(__name__)

PRODUCER_ID_BLOCK = 1000
MetadataListener = Callable[[set[str], list[TopicState]], None]


class Controller(TopicChanges):
    def __init__(self, metadata_dir: Path, broker_config: BrokerConfig) -> None:
        self.image = MetadataImage()
        self.broker_config = broker_config
        self._journal = MetadataJournal(metadata_dir)
        self._listeners: list[MetadataListener] = []
        # Per broker id, a check of its dynamic configs as they would be after a change (the
        # brokers' listeners try a TLS key store set at run time before it is taken).
        self.broker_config_checks: dict[int, Callable[[dict[str, Any]], None]] = {}
        self.fenced: set[int] = set()      # registered brokers that are stopped
        # True from an engine start until the first periodic leader rebalance (see runtime.py).
        self.restoring_preferred_leaders = False
        self._producer_ids_left = 0
        self._next_producer_id = 0
        for path, offset, record in self._journal.replay():
            try:
                R.apply(self.image, record)
            except R.MetadataRecordError as exc:
                raise MetadataCorruptError(path, offset, f"the record {R.printable(record)!r} makes no sense ({exc})",
                                           repairable=path.name.startswith("journal-")) from None
        if self._journal.needs_migration:
            self._journal.write_snapshot(self.snapshot_records())
            log.info("Cluster metadata migrated to the framed journal format (generation %d)",
                     self._journal.generation)
        if not self.image.cluster_id:
            self._commit([R.cluster_record(_new_cluster_id())])
        self._mend_stray_members()
        self._apply_broker_config_overrides()

    def _mend_stray_members(self) -> None:
        """The journal may hold partitions whose ISR or leader names a broker that is not one
        of their replicas (RC.stray_member_records): they are mended before any broker serves."""
        mends = RC.stray_member_records(self.image)
        for record in mends:
            topic = self.image.topics_by_id[uuid.UUID(record["topic_id"])]
            before = topic.partitions[record["partition"]]
            log.warning("%s-%d named brokers that are not its replicas: ISR %s -> %s, leader %d -> %d", topic.name,
                        before.partition, before.isr, record["isr"], before.leader, record["leader"])
        self._commit_partition_changes(mends)

    def broker_config_for(self, node_id: int) -> BrokerConfig:
        """The effective config of one broker (node_id -1: the cluster-wide view, no per-broker layer)."""
        return BrokerConfig(static=dict(self.broker_config.static),
                            dynamic=dict(self.image.broker_configs.get(str(node_id), {})) if node_id >= 0 else {},
                            dynamic_default=dict(self.image.broker_configs.get("", {})))

    # --- plumbing -------------------------------------------------------------------------

    def add_listener(self, listener: MetadataListener) -> None:
        if listener not in self._listeners:
            self._listeners.append(listener)

    def remove_listener(self, listener: MetadataListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _commit(self, records: list[dict], *, changed: set[str] | None = None,
                deleted: list[TopicState] | None = None, live_before: set[int] | None = None,
                check_states: bool = True) -> None:
        """Check `records`, journal them, apply them, check the state moves (skipped where
        every move is legal by construction: a whole topic removed) and tell the brokers.
        A record the image would refuse is never journaled (the journal would not load at the
        next start): the change fails with UNKNOWN_SERVER_ERROR and nothing is written."""
        self._check_before_journaling(records)
        before, replicas = self._states_before(records, self.live_brokers() if live_before is None else live_before) \
            if check_states else ({}, {})
        self._journal.append(records)
        for record in records:
            R.apply_checked(self.image, record)
        for move in SM.check_changes(before, SM.snapshot(self.image, set(before), self.live_brokers(), replicas)):
            log.debug("State change %s", move)
        self._notify(changed, deleted)

    def _check_before_journaling(self, records: list[dict]) -> None:
        try:
            R.check_batch(self.image, records)
            for record in records:
                if record["type"] == "partition":
                    RC.check_members(record)
        except (R.MetadataRecordError, ValueError) as exc:
            log.error("A metadata change was refused before it was journaled: %s", exc)
            raise ApiError(Errors.UnknownError, "the metadata change could not be applied") from None

    def _notify(self, changed: set[str] | None, deleted: list[TopicState] | None = None) -> None:
        for listener in self._listeners:
            listener(changed or set(), deleted or [], self.controller_epoch)

    async def _commit_new_partitions(self, topic_id: uuid.UUID, assignment: dict[int, list[int]], *,
                                     name: str, topic_record: dict | None, recheck: Callable[[], None]) -> None:
        """Commit a topic's new partitions (and the topic record of a new topic) without
        freezing the event loop: the records are built, checked (applied to a scratch image)
        and framed in slices; then, in one short turn, `recheck()` confirms that what was
        validated still holds (it raises ApiError otherwise, and nothing is written), the
        frames are journaled with one fsync, and the partitions join the image at once, so
        no reader ever sees half a change. New partitions move only NonExistent -> New ->
        Online/Offline, which the state machines always allow."""
        scratch = MetadataImage()
        scratch.topics_by_id[topic_id] = TopicState(name, topic_id)
        frames = [F.frame(topic_record)] if topic_record else []
        live = self.live_brokers()

        def add(item: tuple[int, list[int]]) -> None:
            record = self.new_partition_record(topic_id, item[0], item[1], live)
            R.apply(scratch, record)
            frames.append(F.frame(record))
        await slices.for_each(sorted(assignment.items()), add)
        recheck()
        self._check_before_journaling([topic_record] if topic_record else [])
        self._journal.append_frames(frames)
        if topic_record:
            R.apply_checked(self.image, topic_record)
        R.install_partitions(self.image, topic_id, scratch.topics_by_id[topic_id].partitions)
        self._notify({name})
        self._liveness_changed_since(live, topic_id)

    def _liveness_changed_since(self, live: set[int], topic_id: uuid.UUID) -> None:
        """A topic's new partitions prepared over many turns name the brokers live at their
        start as leaders and ISR members: for a broker that stopped meanwhile, their leaderships
        and ISR places move away now that they are in the image, as fence_broker moved the
        others'; one that came back may lead those left without a leader. Only these partitions:
        the rest of the image followed each fence as it happened (a stopping engine keeps its
        stranded leaders, see RC.fence_records)."""
        now = self.live_brokers()
        for node_id in sorted(live - now):
            log.info("Broker %d stopped while new partitions were prepared: moving them off it", node_id)
            self._commit_partition_changes(self._of_topic(topic_id, RC.fence_records(
                self.image, node_id, now, self._unclean_default())), live_before=now | {node_id})
        for node_id in sorted(now - live):
            self._commit_partition_changes(self._of_topic(topic_id, RC.unfence_records(
                self.image, node_id, now, self._unclean_default())), live_before=now - {node_id})

    @staticmethod
    def _of_topic(topic_id: uuid.UUID, records: list[dict]) -> list[dict]:
        return [record for record in records if record["topic_id"] == str(topic_id)]

    def _states_before(self, records: list[dict], live: set[int]) -> tuple[SM.Snapshot, dict]:
        """Partition and replica states of everything `records` touch, before they apply."""
        keys, replicas = set(), {}
        for record in records:
            if record["type"] == "partition":
                key = (uuid.UUID(record["topic_id"]), record["partition"])
                old = self.image.topics_by_id.get(key[0])
                old_state = old.partitions.get(key[1]) if old else None
                keys.add(key)
                replicas[key] = set(record["replicas"]) | set(old_state.replicas if old_state else ())
            elif record["type"] == "remove_topic":
                topic = self.image.topics_by_id[uuid.UUID(record["topic_id"])]
                for index, state in topic.partitions.items():
                    keys.add((topic.topic_id, index))
                    replicas[(topic.topic_id, index)] = set(state.replicas)
        return SM.snapshot(self.image, keys, live, replicas), replicas

    def _apply_broker_config_overrides(self) -> None:
        self.broker_config.dynamic_default = dict(self.image.broker_configs.get("", {}))

    def snapshot_records(self) -> list[dict]:
        image = self.image
        out = [R.cluster_record(image.cluster_id), R.producer_ids_record(image.next_producer_id),
               R.controller_record(image.controller_id, image.controller_epoch)]
        out += [R.broker_record(b.node_id, b.host, b.port, b.rack, b.endpoints) for b in image.brokers.values()]
        for name, configs in image.broker_configs.items():
            out += [R.config_record("broker", name, key, value) for key, value in configs.items()]
        for name, configs in image.group_configs.items():
            out += [R.config_record("group", name, key, value) for key, value in configs.items()]
        for entity, values in image.client_quotas.items():
            out += [R.client_quota_record(entity, key, value) for key, value in values.items()]
        out += SC.snapshot_records(image.scram_credentials)
        out += ACL.snapshot_records(image.acls)
        for topic in image.topics.values():
            out.append(R.topic_record(topic.name, topic.topic_id, topic.configs))
            out += [R.partition_record(topic.topic_id, p.partition, p.replicas, p.leader, p.leader_epoch, p.isr,
                                       p.partition_epoch, p.adding_replicas, p.removing_replicas)
                    for p in topic.partitions.values()]
        return out

    def shutdown(self) -> None:
        self._journal.write_snapshot(self.snapshot_records())
        self._journal.close()

    # --- brokers --------------------------------------------------------------------------

    def register_broker(self, node_id: int, host: str, port: int, rack: str | None = None,
                        endpoints: tuple[tuple[str, str, int], ...] = ()) -> None:
        """host, port: the inter-broker listener's endpoint; endpoints: every listener's (name, host, port)."""
        current = self.image.brokers.get(node_id)
        if current is None or (current.host, current.port, current.rack, current.endpoints) != \
                (host, port, rack, tuple(endpoints)):
            self._commit([R.broker_record(node_id, host, port, rack, tuple(endpoints))])

    @property
    def controller_epoch(self) -> int:
        return self.image.controller_epoch

    def live_brokers(self) -> set[int]:
        return set(self.image.brokers) - self.fenced

    def elect_controller(self) -> None:
        """The lowest live broker id is the active controller; every change of controller
        raises the epoch, and brokers ignore metadata carrying an older one."""
        live = sorted(self.live_brokers())
        chosen = live[0] if live else -1
        if chosen != self.image.controller_id:
            self._commit([R.controller_record(chosen, self.image.controller_epoch + 1)], changed=set())
            log.info("Broker %d is the active controller (epoch %d)", chosen, self.image.controller_epoch)

    def fence_broker(self, node_id: int, *, keep_stranded: bool = False) -> None:
        """A broker stops (controlled shutdown or failure): move leadership and ISR membership
        away (`keep_stranded`: see RC.fence_records)."""
        live_before = self.live_brokers()
        self.fenced.add(node_id)
        self._commit_partition_changes(RC.fence_records(self.image, node_id, self.live_brokers(),
                                                        self._unclean_default(), keep_stranded=keep_stranded),
                                       live_before=live_before)
        if self.image.controller_id == node_id or self.image.controller_id not in self.live_brokers():
            self.elect_controller()

    def unfence_broker(self, node_id: int) -> None:
        """A broker is back: it may lead leaderless partitions again; followers rejoin the ISR by catching up."""
        live_before = self.live_brokers()
        self.fenced.discard(node_id)
        self._commit_partition_changes(RC.unfence_records(self.image, node_id, self.live_brokers(),
                                                          self._unclean_default()), live_before=live_before)
        if self.image.controller_id not in self.live_brokers():
            self.elect_controller()

    def elect_longest_logs(self, reports: dict[int, dict[tuple[str, int], RC.ReplicaLog]]) -> int:
        """At engine start, before any broker serves: the ISR member with the longest
        recovered log leads each partition (see RC.longest_log_records). `reports`: what each
        restarted broker's logs hold. Returns how many partitions changed."""
        records = RC.longest_log_records(self.image, reports, self.live_brokers())
        for record in records:
            topic = self.image.topics_by_id[uuid.UUID(record["topic_id"])]
            before = topic.partitions[record["partition"]]
            key = (topic.name, record["partition"])
            lost = [b for b, logs in reports.items() if key in logs and logs[key].lost_acknowledged_data]
            log.warning("%s-%d after recovery: leader %d -> %d, ISR %s -> %s (the longest log leads; shorter "
                        "replicas re-fetch before rejoining)%s", *key, before.leader, record["leader"], before.isr,
                        record["isr"], f"; replicas {lost} lost acknowledged data in recovery" if lost else "")
        self._commit_partition_changes(records)
        return len(records)

    def _unclean_default(self) -> bool:
        return bool(self.broker_config.get("unclean.leader.election.enable"))

    def _commit_partition_changes(self, records: list[dict], *, live_before: set[int] | None = None) -> None:
        if records:
            changed = {self.image.topics_by_id[uuid.UUID(r["topic_id"])].name for r in records}
            self._commit(records, changed=changed, live_before=live_before)

    # --- partitions: ISR, elections, reassignments -----------------------------------------

    def _partition(self, topic: str, index: int):
        state = self.image.partition(topic, index)
        if state is None:
            raise ApiError(Errors.UnknownTopicOrPartitionError)
        return self.image.topics[topic], state

    def alter_isr(self, topic: str, index: int, *, leader_id: int, leader_epoch: int, partition_epoch: int,
                  isr: list[int]) -> None:
        """A leader's ISR change (Kafka's AlterPartition), fenced by leader and partition epochs."""
        errors = self.alter_isrs([(topic, index, leader_id, leader_epoch, partition_epoch, isr)])
        if errors:
            raise next(iter(errors.values()))

    def alter_isrs(self, proposals: list[tuple[str, int, int, int, int, list[int]]]) -> dict[tuple[str, int], ApiError]:
        """Many ISR changes in one metadata commit (a leader batches them, as AlterPartition does).

        Each is (topic, partition, leader id, leader epoch, partition epoch, new ISR); the
        refused ones come back with their error. Reassignments that the new ISRs complete,
        and preferred leaders returning after an engine restart, follow in one more commit."""
        records, errors, touched = [], {}, []
        live = self.live_brokers()
        for topic, index, leader_id, leader_epoch, partition_epoch, isr in proposals:
            try:
                topic_state, state = self._partition(topic, index)
                record = RC.alter_isr_record(topic_state, state, leader_id=leader_id, leader_epoch=leader_epoch,
                                             partition_epoch=partition_epoch, isr=isr, live=live)
            except ApiError as exc:
                errors[(topic, index)] = exc
                continue
            if record:
                records.append(record)
                touched.append((topic, index))
        self._commit_partition_changes(records)
        follow_ups = [self._follow_up_record(topic, index) for topic, index in touched]
        self._commit_partition_changes([r for r in follow_ups if r])
        return errors

    def _follow_up_record(self, topic: str, index: int) -> dict | None:
        """What an ISR change may unlock: finishing a reassignment, or (right after an engine
        start) giving the partition back to its preferred replica once that one is in sync."""
        topic_state, state = self._partition(topic, index)
        live = self.live_brokers()
        record = RC.completion_record(topic_state, state, live)
        if record or not self.restoring_preferred_leaders or \
                not self.broker_config.get("auto.leader.rebalance.enable"):
            return record
        preferred = state.replicas[0]
        if state.leader != preferred and preferred in state.isr and preferred in live \
                and not (state.adding_replicas or state.removing_replicas):
            return RC.change(topic_state, state, leader=preferred)
        return None

    def elect_leader(self, topic: str, index: int, election_type: int) -> None:
        topic_state, state = self._partition(topic, index)
        self._commit_partition_changes([RC.elect_record(self.image, topic_state, state, election_type,
                                                        self.live_brokers())])

    def reassign_partition(self, topic: str, index: int, target: list[int] | None) -> None:
        """Start moving a partition to `target` replicas, or cancel (None) an ongoing move."""
        topic_state, state = self._partition(topic, index)
        record = RC.reassignment_record(self.image, topic_state, state, target, self.live_brokers(),
                                        self._unclean_default())
        self._commit_partition_changes([record] if record else [])
        self._maybe_complete_reassignment(topic, index)

    def _maybe_complete_reassignment(self, topic: str, index: int) -> None:
        topic_state, state = self._partition(topic, index)
        record = RC.completion_record(topic_state, state, self.live_brokers())
        self._commit_partition_changes([record] if record else [])

    def rebalance_leaders(self) -> int:
        """Kafka's auto leader rebalance: for each broker whose share of partitions it should
        lead (as preferred replica) but does not exceeds `leader.imbalance.per.broker.percentage`,
        move those leaderships back where the preferred replica is live and in the ISR."""
        threshold = self.broker_config.get("leader.imbalance.per.broker.percentage") / 100
        live = self.live_brokers()
        by_broker: dict[int, list] = {}
        for topic, state in RC.partitions_of(self.image):
            if not (state.adding_replicas or state.removing_replicas):
                by_broker.setdefault(state.replicas[0], []).append((topic, state))
        records = []
        for broker, owned in by_broker.items():
            misplaced = [(t, s) for t, s in owned if s.leader != broker]
            if broker not in live or not owned or len(misplaced) / len(owned) <= threshold:
                continue
            records += [RC.change(t, s, leader=broker) for t, s in misplaced if broker in s.isr]
        self._commit_partition_changes([r for r in records if r])
        return len([r for r in records if r])

    def ongoing_reassignments(self) -> dict[tuple[str, int], object]:
        return {(topic.name, state.partition): state for topic, state in RC.partitions_of(self.image)
                if state.adding_replicas or state.removing_replicas}

    # --- configs --------------------------------------------------------------------------

    def alter_topic_configs(self, name: str, changes: dict[str, Any | None], *, validate_only: bool = False) -> None:
        """changes maps config name to new value, or None to revert to the default."""
        if name not in self.image.topics:
            raise ApiError(Errors.UnknownTopicOrPartitionError)
        try:
            parsed = validate_topic_configs(changes, self.image.topics[name].configs,
                                            broker=self.broker_config_for(-1))
        except InvalidConfigError as exc:
            raise ApiError(Errors.InvalidConfigurationError, str(exc)) from None
        internal_topics.check_topic_configs(name, self.image.topics[name].configs, parsed, self.broker_config)
        if validate_only:
            return
        records = [R.config_record("topic", name, key, parsed.get(key)) for key in changes]
        if records:
            self._commit(records, changed={name})

    def alter_broker_configs(self, broker: str, changes: dict[str, Any | None], *, validate_only: bool = False) -> None:
        """broker is a node id as a string, or "" for the cluster-wide default.

        Kafka answers a broker config it cannot take with INVALID_REQUEST, not INVALID_CONFIG
        (DynamicBrokerConfig's ConfigException becomes an InvalidRequestException)."""
        if broker and int(broker) not in self.image.brokers:
            raise ApiError(Errors.InvalidRequestError, f"Unknown broker {broker}")
        try:
            parsed = validate_dynamic_broker_configs(changes, per_broker=bool(broker))
            check = self.broker_config_checks.get(int(broker)) if broker else None
            if check is not None:
                after = {**self.image.broker_configs.get(broker, {}), **parsed}
                check({name: value for name, value in after.items() if value is not None})
        except InvalidConfigError as exc:
            raise ApiError(Errors.InvalidRequestError, str(exc)) from None
        if validate_only:
            return
        records = [R.config_record("broker", broker, key, parsed.get(key)) for key in changes]
        if records:
            self._commit(records, changed=set(self.image.topics))
            self._apply_broker_config_overrides()

    def alter_group_configs(self, group_id: str, changes: dict[str, Any | None], *,
                            validate_only: bool = False) -> None:
        """Dynamic group configs (engine/coordinator/group_configs.py); a bad name or value is
        INVALID_CONFIG, as Kafka answers."""
        if not group_id:
            raise ApiError(Errors.InvalidRequestError, "Group id must not be empty")
        try:
            parsed = validate_group_configs(changes, self.broker_config)
        except InvalidConfigError as exc:
            raise ApiError(Errors.InvalidConfigurationError, str(exc)) from None
        if validate_only:
            return
        records = [R.config_record("group", group_id, key, parsed.get(key)) for key in changes]
        if records:
            self._commit(records, changed=set())

    # --- client quotas (KIP-546) ----------------------------------------------------------

    def alter_client_quotas(self, entries: list[tuple[list[tuple[str, str | None]], list[tuple[str, float, bool]]]],
                            *, validate_only: bool = False) -> list[ApiError | None]:
        """AlterClientQuotas: each entry is (entity pairs, ops of (key, value, remove)); an
        entry is applied whole or refused (its error returned, None if it went through).
        The accepted entries are journaled in one commit."""
        records, errors = [], []
        for pairs, ops in entries:
            try:
                entity = CQ.entity_of(pairs)
                keys = [key for key, _, _ in ops]
                if len(set(keys)) != len(keys):
                    raise ApiError(Errors.InvalidRequestError, "Duplicate quota key in one entity's changes.")
                for key, value, remove in ops:
                    CQ.check_op(key, value, remove, entity)
            except ApiError as exc:
                errors.append(exc)
                continue
            errors.append(None)
            records += [R.client_quota_record(entity, key, None if remove else float(value))
                        for key, value, remove in ops]
        if records and not validate_only:
            self._commit(records, changed=set())
        return errors

    # --- SCRAM credentials (KIP-554) -------------------------------------------------------

    def alter_user_scram_credentials(self, deletions, upsertions) -> list[tuple[str, ApiError | None]]:
        """AlterUserScramCredentials: per-user results; the users that passed, in one commit."""
        results, records = SC.alter(self.image.scram_credentials, deletions, upsertions)
        if records:
            self._commit(records, changed=set())
        return results

    def scram_credential(self, user: str, mechanism: str):
        return self.image.scram_credentials.get(user, {}).get(mechanism)

    # --- ACLs (KIP-801) ----------------------------------------------------------------------

    def create_acls(self, bindings) -> list[ApiError | None]:
        """CreateAcls: one result per binding; the new ones journaled in one commit."""
        results, records = ACL.create(self.image.acls, bindings)
        if records:
            self._commit(records, changed=set())
            log.info("Created %d ACL(s)", len(records))
        return results

    def delete_acls(self, filters) -> list:
        """DeleteAcls: per filter its error or the bindings it removed; one commit for all."""
        results, records = ACL.delete(self.image.acls, filters)
        if records:
            self._commit(records, changed=set())
            log.info("Deleted %d ACL(s)", len(records))
        return results

    # --- producer ids ---------------------------------------------------------------------

    def allocate_producer_id(self) -> int:
        """Hand out producer ids from blocks reserved durably, so ids are never reused after a crash."""
        if self._producer_ids_left == 0:
            start = self.image.next_producer_id
            self._commit([R.producer_ids_record(start + PRODUCER_ID_BLOCK)])
            self._next_producer_id, self._producer_ids_left = start, PRODUCER_ID_BLOCK
        producer_id = self._next_producer_id
        self._next_producer_id += 1
        self._producer_ids_left -= 1
        return producer_id


def _new_cluster_id() -> str:
    import base64
    return base64.urlsafe_b64encode(uuid.UUID(int=random.getrandbits(128)).bytes).decode().rstrip("=")

