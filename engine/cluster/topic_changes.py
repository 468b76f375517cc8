"""Topic changes: CreateTopics (validated one by one, created in one metadata commit),
CreatePartitions and DeleteTopics (validated one by one, removed up to REMOVALS_PER_COMMIT
topics to a metadata commit), as the controller carries them out.

`TopicChanges` is a part of `controller.Controller` (its base class), kept in its own module:
it validates and builds the records, and leaves journaling and announcing them to the
controller's `_commit` and `_commit_new_partitions`. It reads `image` and `broker_config`,
which the controller owns.
"""
from __future__ import annotations

import itertools
import logging
import uuid
from typing import Any

import kafka.errors as Errors

from engine.cluster import internal_topics, slices
from engine.cluster import records as R
from engine.cluster.assignment import assignment_steps, check_manual_replicas
from engine.cluster.metadata import TopicState
from engine.cluster.topics import colliding_internal_topic, collision_key, validate_topic_name
from engine.config import InvalidConfigError, validate_topic_configs
from engine.errors import ApiError

log = logging.getLogger(__name__)

# A change of more new partitions than this is prepared in slices (`create_topic_sliced`).
INLINE_PARTITIONS = 256
# Topics a DeleteTopics removes in one metadata commit (one turn of the event loop: ~15 ms).
REMOVALS_PER_COMMIT = 1000


class TopicChanges:
    """The controller's topic changes (see the module docstring)."""

    def parsed_configs(self, configs: dict[str, Any]) -> dict[str, Any]:
        """A new topic's config overrides parsed and checked against the cluster's defaults for
        topics; raises InvalidConfigError."""
        return validate_topic_configs(configs, broker=self.broker_config_for(-1))

    def validate_new_topic(self, name: str, num_partitions: int, replication_factor: int,
                           assignments: dict[int, list[int]] | None, configs: dict[str, Any], *,
                           planned: NewTopics | None = None) -> dict[int, list[int]]:
        """Check a CreateTopics entry and return its replica assignment; raises ApiError.
        `planned`: topics accepted earlier in the same request, not yet in the image."""
        return slices.run_steps(self.new_topic_checks(name, num_partitions, replication_factor, assignments, configs,
                                                      planned=planned))

    def new_topic_checks(self, name: str, num_partitions: int, replication_factor: int,
                         assignments: dict[int, list[int]] | None, configs: dict[str, Any], *,
                         planned: NewTopics | None = None) -> slices.Steps[dict[int, list[int]]]:
        """validate_new_topic as steps, one per partition of a manual assignment (a request may
        assign a hundred thousand partitions), for the request path to run in slices."""
        validate_topic_name(name)
        if name in self.image.topics or (planned and name in planned.names):
            raise ApiError(Errors.TopicAlreadyExistsError, f"Topic '{name}' already exists.")
        key = collision_key(name)
        colliding = [taken[key] for taken in (self.image.topics_by_collision_key, planned.collision_keys if planned
                                              else {}) if key in taken][:1]
        if colliding:
            raise ApiError(Errors.InvalidTopicError,
                           f"Topic '{name}' collides with existing topic: {colliding[0]}")
        internal = colliding_internal_topic(name)
        if internal:
            raise ApiError(Errors.InvalidTopicError, f"Topic '{name}' collides with internal topic: {internal}")
        try:
            self.parsed_configs(configs)
        except InvalidConfigError as exc:
            raise ApiError(Errors.InvalidConfigurationError, str(exc)) from None
        existing = planned.partitions if planned else None
        if assignments:
            self._check_partition_limit(len(assignments), existing)
            self._check_manual_counts(num_partitions, replication_factor)
            yield from self._manual_assignment_checks(assignments, start=0)
            yield from self._live_replica_checks(assignments, Errors.InvalidReplicationFactorError)
            return assignments
        if replication_factor < -1 or replication_factor == 0:
            raise ApiError(Errors.InvalidReplicationFactorError,
                           "Replication factor must be larger than 0, or -1 to use the default value.")
        if num_partitions < -1 or num_partitions == 0:
            raise ApiError(Errors.InvalidPartitionsError,
                           "Number of partitions was set to an invalid non-positive value.")
        if num_partitions == -1:
            num_partitions = self.broker_config.get("num.partitions")
        if replication_factor == -1:
            replication_factor = self.broker_config.get("default.replication.factor")
        self._check_partition_limit(num_partitions, existing)
        brokers = sorted(self.live_brokers())     # as Kafka's placer: never a stopped (fenced) broker
        if replication_factor > len(brokers):
            raise ApiError(Errors.InvalidReplicationFactorError,
                           f"Unable to replicate the partition {replication_factor} time(s): The target "
                           f"replication factor of {replication_factor} cannot be reached because only "
                           f"{len(brokers)} broker(s) are registered.")
        return (yield from assignment_steps(brokers, num_partitions, replication_factor))

    def partition_count(self) -> int:
        return sum(len(t.partitions) for t in self.image.topics.values())

    def _check_partition_limit(self, adding: int, existing: int | None = None) -> None:
        """The cluster-wide partition limit (`max.partitions`, as KIP-578 names it), checked
        before any work is done, so a request for two billion partitions costs nothing.
        `existing`: the count when the caller knows it (a CreateTopics batch counts once)."""
        limit = self.broker_config.get("max.partitions")
        existing = self.partition_count() if existing is None else existing
        if existing + adding > limit:
            raise ApiError(Errors.PolicyViolationError,
                           f"Adding {adding} partition(s) would bring the cluster to {existing + adding}, over its "
                           f"limit of {limit} (max.partitions).")

    @staticmethod
    def _check_manual_counts(num_partitions: int, replication_factor: int) -> None:
        """KRaft takes the counts from the assignment alone: explicit ones are INVALID_REQUEST."""
        if replication_factor != -1:
            raise ApiError(Errors.InvalidRequestError,
                           "A manual partition assignment was specified, but replication factor was not set to -1.")
        if num_partitions != -1:
            raise ApiError(Errors.InvalidRequestError,
                           "A manual partition assignment was specified, but numPartitions was not set to -1.")

    def _manual_assignment_checks(self, assignments: dict[int, list[int]], *, start: int,
                                  replication_factor: int | None = None) -> slices.Steps[None]:
        """As KRaft's validateManualPartitionAssignment: registered brokers, each at most once,
        one replication factor for every partition (the topic's own when it grows)."""
        for partition in sorted(assignments):
            replicas = assignments[partition]
            check_manual_replicas(replicas, self.image.brokers)
            if replication_factor is not None and len(replicas) != replication_factor:
                raise ApiError(Errors.InvalidReplicationAssignmentError,
                               f"The manual partition assignment includes a partition with {len(replicas)} "
                               "replica(s), but this is not consistent with previous partitions, which have "
                               f"{replication_factor} replica(s).")
            replication_factor = len(replicas)
            yield
        if sorted(assignments) != list(range(start, start + len(assignments))):
            raise ApiError(Errors.InvalidReplicationAssignmentError,
                           "partitions should be a consecutive 0-based integer sequence")

    def _live_replica_checks(self, assignment: dict[int, list[int]], error) -> slices.Steps[None]:
        """A new partition starts led by a live replica (new_partition_record): a manual
        assignment of stopped brokers only is refused, with KRaft's message (its code is
        INVALID_REPLICATION_FACTOR for CreateTopics, INVALID_REPLICA_ASSIGNMENT for
        CreatePartitions)."""
        live = self.live_brokers()
        for partition in sorted(assignment):
            if not any(r in live for r in assignment[partition]):
                raise ApiError(error, f"All brokers specified in the manual partition assignment for partition "
                                      f"{partition} are fenced or in controlled shutdown.")
            yield

    def new_partition_record(self, topic_id: uuid.UUID, partition: int, replicas: list[int],
                             live: set[int]) -> dict:
        """A new partition, as KRaft registers one: its ISR the live replicas, its leader the
        first of them; a stopped replica joins the ISR by catching up once it is back."""
        isr = [r for r in replicas if r in live]
        return R.partition_record(topic_id, partition, list(replicas), isr[0] if isr else -1, 0, isr or list(replicas))

    def create_topic(self, name: str, num_partitions: int, replication_factor: int,
                     assignments: dict[int, list[int]] | None = None,
                     configs: dict[str, Any] | None = None) -> TopicState:
        batch = self.new_topics()
        batch.add(name, num_partitions, replication_factor, assignments, configs)
        batch.commit()
        return self.image.topics[name]

    def new_topics(self) -> NewTopics:
        """Topics validated one by one and created together, in one journal write (CreateTopics)."""
        return NewTopics(self)

    def commit_new_topics(self, records: list[dict], names: set[str]) -> None:
        """NewTopics.commit: the topic and partition records of every accepted topic, at once."""
        self._commit(records, changed=set(names))

    async def create_topic_sliced(self, name: str, num_partitions: int, replication_factor: int,
                                  assignments: dict[int, list[int]] | None = None,
                                  configs: dict[str, Any] | None = None) -> TopicState:
        """create_topic for the request path: a topic of more than INLINE_PARTITIONS
        partitions is prepared in slices of the event loop (see _commit_new_partitions)."""
        configs = configs or {}
        with slices.Pacer() as pacer:
            assignment = await slices.run_steps_sliced(self.new_topic_checks(
                name, num_partitions, replication_factor, assignments, configs), pacer)
        if len(assignment) <= INLINE_PARTITIONS:
            return self.create_topic(name, num_partitions, replication_factor, assignments, configs)
        topic_id = uuid.uuid4()

        def recheck() -> None:    # another request may have taken the name or the room meanwhile
            if name in self.image.topics or collision_key(name) in self.image.topics_by_collision_key:
                raise ApiError(Errors.TopicAlreadyExistsError, f"Topic '{name}' already exists.")
            self._check_partition_limit(len(assignment))

        await self._commit_new_partitions(topic_id, assignment, name=name, recheck=recheck,
                                          topic_record=R.topic_record(name, topic_id, self.parsed_configs(configs)))
        log.info("Created topic %s with %d partitions", name, len(assignment))
        return self.image.topics[name]

    def delete_topic(self, name: str) -> None:
        batch = self.topic_deletions()
        batch.add(name)
        failed = batch.commit_next()
        if failed:
            raise next(iter(failed.values()))

    def topic_deletions(self) -> TopicDeletions:
        """Topics validated one by one and removed together, a thousand to a journal write (DeleteTopics)."""
        return TopicDeletions(self)

    def commit_topic_removals(self, topics: list[TopicState]) -> None:
        """TopicDeletions.commit_next: a remove-topic record per topic, in one metadata commit, so
        the brokers drop the replicas of all of them in one pass. Removing a whole topic is
        legal from every state; the moves of a big removal are not walked."""
        self._commit([R.remove_topic_record(topic.topic_id) for topic in topics], deleted=topics,
                     check_states=sum(len(topic.partitions) for topic in topics) <= INLINE_PARTITIONS)

    def _commit_partitions(self, name: str, new: dict[int, list[int]]) -> None:
        topic = self.image.topics[name]
        live = self.live_brokers()
        self._commit([self.new_partition_record(topic.topic_id, p, r, live) for p, r in sorted(new.items())],
                     changed={name})

    async def create_partitions_sliced(self, name: str, count: int, assignments: list[list[int]] | None, *,
                                       validate_only: bool = False) -> None:
        """Grow a topic to `count` partitions (CreatePartitions), validated in slices of the event
        loop; more than INLINE_PARTITIONS new partitions are also prepared so (see
        _commit_new_partitions)."""
        with slices.Pacer() as pacer:
            new = await slices.run_steps_sliced(self._new_partitions_checks(name, count, assignments), pacer)
        if validate_only:
            return
        if len(new) <= INLINE_PARTITIONS:
            return self._commit_partitions(name, new)
        topic = self.image.topics[name]
        current = len(topic.partitions)

        def recheck() -> None:    # the topic deleted, re-created or grown meanwhile
            now = self.image.topics.get(name)
            if now is not topic:
                raise ApiError(Errors.UnknownTopicOrPartitionError, f"Topic {name} was deleted meanwhile.")
            if len(now.partitions) != current:
                raise ApiError(Errors.InvalidPartitionsError, f"Topic {name} grew to {len(now.partitions)} "
                               "partition(s) while this request was prepared; retry.")
            self._check_partition_limit(len(new))

        await self._commit_new_partitions(topic.topic_id, new, name=name, topic_record=None, recheck=recheck)

    def _new_partitions_checks(self, name: str, count: int,
                               assignments: list[list[int]] | None) -> slices.Steps[dict[int, list[int]]]:
        """Validate a CreatePartitions entry and return the new partitions' replicas; steps, one
        per partition of a manual assignment."""
        topic = self.image.topics.get(name)
        if topic is None:
            raise ApiError(Errors.UnknownTopicOrPartitionError)
        internal_topics.check_partition_count_change(name, self.broker_config)
        current = len(topic.partitions)
        if count == current:
            raise ApiError(Errors.InvalidPartitionsError, f"Topic already has {current} partition(s).")
        if count < current:
            raise ApiError(Errors.InvalidPartitionsError,
                           f"The topic {name} currently has {current} partition(s); {count} would not be an "
                           "increase.")
        self._check_partition_limit(count - current)
        rf = len(topic.partitions[0].replicas)
        if assignments:
            if len(assignments) != count - current:
                raise ApiError(Errors.InvalidReplicationAssignmentError,
                               f"Attempted to add {count - current} additional partition(s), but only "
                               f"{len(assignments)} assignment(s) were specified.")
            new = {current + i: list(r) for i, r in enumerate(assignments)}
            yield from self._manual_assignment_checks(new, start=current, replication_factor=rf)
            yield from self._live_replica_checks(new, Errors.InvalidReplicationAssignmentError)
        else:
            live = sorted(self.live_brokers())
            if rf > len(live):
                raise ApiError(Errors.InvalidReplicationFactorError,
                               f"Unable to replicate the partition {rf} time(s): The target replication factor of "
                               f"{rf} cannot be reached because only {len(live)} broker(s) are registered.")
            new = yield from assignment_steps(live, count - current, rf, start_partition=current)
        return new


class NewTopics:
    """Topics of one CreateTopics request: each is validated against the image and the ones
    accepted before it (`add`), then all are created in one metadata commit (`commit`): one
    journal fsync and one announcement to the brokers instead of one per topic (10,000
    topics took 80 s one by one, most of it fsyncs and per-commit work)."""

    def __init__(self, controller: TopicChanges) -> None:
        self._controller = controller
        self.names: set[str] = set()
        self.collision_keys: dict[str, str] = {}
        self.partitions = controller.partition_count()   # in the image plus accepted here
        self._records: dict[str, list[dict]] = {}     # by topic, in the order added

    def add(self, name: str, num_partitions: int, replication_factor: int,
            assignments: dict[int, list[int]] | None = None, configs: dict[str, Any] | None = None,
            ) -> dict[int, list[int]]:
        """Validate one topic and keep it for `commit`; returns its assignment. Raises ApiError."""
        configs = configs or {}
        assignment = self._controller.validate_new_topic(name, num_partitions, replication_factor, assignments,
                                                         configs, planned=self)
        self._keep(name, assignment, configs, prepared=True)
        return assignment

    async def add_sliced(self, name: str, num_partitions: int, replication_factor: int,
                         assignments: dict[int, list[int]] | None, configs: dict[str, Any],
                         pacer: slices.Pacer) -> dict[int, list[int]]:
        """`add` for the request path, validated in slices of the loop. A topic of more than
        INLINE_PARTITIONS partitions is not kept for `commit`: the caller creates it on its own
        (create_topic_sliced); its name and partitions still count as taken for the topics
        added after it."""
        assignment = await slices.run_steps_sliced(self._controller.new_topic_checks(
            name, num_partitions, replication_factor, assignments, configs, planned=self), pacer)
        self._keep(name, assignment, configs, prepared=len(assignment) <= INLINE_PARTITIONS)
        return assignment

    def _keep(self, name: str, assignment: dict[int, list[int]], configs: dict[str, Any], *, prepared: bool) -> None:
        if prepared:
            topic_id = uuid.uuid4()
            live = self._controller.live_brokers()
            self._records[name] = [R.topic_record(name, topic_id, self._controller.parsed_configs(configs))] + [
                self._controller.new_partition_record(topic_id, p, replicas, live)
                for p, replicas in sorted(assignment.items())]
        self.names.add(name)
        self.collision_keys[collision_key(name)] = name
        self.partitions += len(assignment)

    def withdraw_taken(self) -> dict[str, ApiError]:
        """Just before `commit`, when the validation spanned several turns of the event loop
        (a request of thousands of topics): the topics whose name another request took
        meanwhile are withdrawn, and all of them if the cluster-wide partition limit would now
        be passed. Returns each withdrawn topic's error."""
        image = self._controller.image
        withdrawn = {name: ApiError(Errors.TopicAlreadyExistsError, f"Topic '{name}' already exists.")
                     for name in self._records
                     if name in image.topics or collision_key(name) in image.topics_by_collision_key}
        for name in withdrawn:
            del self._records[name]
        adding = sum(r["type"] == "partition" for records in self._records.values() for r in records)
        existing, limit = self._controller.partition_count(), self._controller.broker_config.get("max.partitions")
        if existing + adding > limit:
            error = ApiError(Errors.PolicyViolationError, f"Adding {adding} partition(s) would bring the cluster to "
                             f"{existing + adding}, over its limit of {limit} (max.partitions).")
            withdrawn.update(dict.fromkeys(self._records, error))
            self._records = {}
        return withdrawn

    def commit(self) -> None:
        if not self._records:
            return
        records = [r for topic in self._records.values() for r in topic]
        self._controller.commit_new_topics(records, set(self._records))
        log.info("Created %d topic(s) with %d partitions in all", len(self._records),
                 sum(r["type"] == "partition" for r in records))
        self._records = {}


class TopicDeletions:
    """Topics of one DeleteTopics request: each is validated against the image less the
    topics accepted before it (`add`; a name or id given twice is unknown the second time, as
    if the first were deleted already), then they are removed REMOVALS_PER_COMMIT at a time
    (`commit_next`), each lot in one metadata commit: one journal fsync and one announcement,
    so each broker drops a lot's replicas in one pass, not topic by topic."""

    def __init__(self, controller: TopicChanges) -> None:
        self._controller = controller
        self._topics: dict[uuid.UUID, TopicState] = {}     # accepted and not committed yet, in the order added
        self._taken: set[uuid.UUID] = set()                # every topic accepted, committed or not

    def topic(self, name: str) -> TopicState | None:
        """The topic of this name, unless this batch removes it already."""
        topic = self._controller.image.topics.get(name)
        return None if topic is None or topic.topic_id in self._taken else topic

    def topic_by_id(self, topic_id: uuid.UUID) -> TopicState | None:
        return None if topic_id in self._taken else self._controller.image.topics_by_id.get(topic_id)

    def add(self, name: str) -> TopicState:
        """Validate one topic and keep it for `commit_next`; raises ApiError."""
        topic = self.topic(name)
        if topic is None:
            raise ApiError(Errors.UnknownTopicOrPartitionError)
        if not self._controller.broker_config.get("delete.topic.enable"):
            raise ApiError(Errors.TopicDeletionDisabledError)
        self._topics[topic.topic_id] = topic
        self._taken.add(topic.topic_id)
        return topic

    def pending(self) -> bool:
        return bool(self._topics)

    def commit_next(self) -> dict[uuid.UUID, ApiError]:
        """Remove the next REMOVALS_PER_COMMIT accepted topics in one metadata commit; returns
        the error of each that was not removed, by topic id: UNKNOWN_TOPIC_OR_PARTITION for a
        topic another request deleted (or deleted and created again) since it was accepted
        (the validation may span many turns of the event loop), the commit's error for all of
        them if it failed."""
        lot = [self._topics.pop(topic_id) for topic_id in list(itertools.islice(self._topics, REMOVALS_PER_COMMIT))]
        by_id = self._controller.image.topics_by_id
        failed = {t.topic_id: ApiError(Errors.UnknownTopicOrPartitionError) for t in lot
                  if by_id.get(t.topic_id) is not t}
        topics = [t for t in lot if t.topic_id not in failed]
        if not topics:
            return failed
        try:
            self._controller.commit_topic_removals(topics)
        except ApiError as exc:
            failed.update(dict.fromkeys((t.topic_id for t in topics), exc))
            return failed
        log.info("Deleted %d topic(s) with %d partitions in all", len(topics), sum(len(t.partitions) for t in topics))
        return failed
