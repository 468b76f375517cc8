"""`python -m engine transactions --bootstrap HOST:PORT COMMAND`, in the shape of kafka-transactions.sh:

  list                                   TransactionalId Coordinator ProducerId TransactionState
  describe --transactional-id ID         CoordinatorId TransactionalId ProducerId ProducerEpoch
                                         TransactionState TransactionTimeoutMs
                                         CurrentTransactionStartTimeMs TransactionDurationMs TopicPartitions
  describe-producers --topic T --partition P [--broker-id B]
  find-hanging (--topic T [--partition P] | --broker-id B) [--max-transaction-timeout MINUTES]
  abort --topic T --partition P (--start-offset N | --producer-id --producer-epoch --coordinator-epoch)

Kafka's column names and its error texts; `--bootstrap-server` is accepted as Kafka spells it.
Everything goes over the Kafka protocol (engine/tools/transactions.py).
"""
from __future__ import annotations

import argparse
import sys
import time

import kafka.errors as Errors
from kafka.structs import TopicPartition

from engine.tools import transactions as txn
from engine.tools.tables import format_table

LIST_HEADER = ("TransactionalId", "Coordinator", "ProducerId", "TransactionState")
DESCRIBE_HEADER = ("CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
                   "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions")
PRODUCERS_HEADER = ("ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp",
                    "CurrentTransactionStartOffset")
HANGING_HEADER = ("Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                  "LastTimestamp", "Duration(min)")


def add_parser(commands) -> None:
    parser = commands.add_parser("transactions", help="list, describe, find hanging and abort transactions",
                                 description="Analyze the transactional state of producers in the cluster; "
                                             "detect and recover from hanging transactions.")
    parser.add_argument("--bootstrap", "--bootstrap-server", dest="bootstrap", required=True,
                        help="brokers to connect to, host:port[,host:port]")
    sub = parser.add_subparsers(dest="transactions_command", required=True, metavar="COMMAND")
    sub.add_parser("list", help="list transactions")
    describe = sub.add_parser("describe", help="describe the state of an active transactional-id")
    describe.add_argument("--transactional-id", required=True)
    producers = sub.add_parser("describe-producers", help="describe the active producers of a topic partition")
    _partition_args(producers, required=True)
    producers.add_argument("--broker-id", type=int, help="describe the producer state on this replica")
    hanging = sub.add_parser("find-hanging", help="find hanging transactions")
    _partition_args(hanging, required=False)
    hanging.add_argument("--broker-id", type=int, help="broker id to search for hanging transactions")
    hanging.add_argument("--max-transaction-timeout", type=int, default=txn.DEFAULT_MAX_TRANSACTION_TIMEOUT_MINUTES,
                         metavar="MINUTES", help="maximum transaction timeout in minutes to limit the scope "
                                                 "of the search (default 15)")
    abort = sub.add_parser("abort", help="abort a hanging transaction (requires administrative privileges)")
    _partition_args(abort, required=True)
    abort.add_argument("--start-offset", type=int, help="start offset of the transaction to abort")
    abort.add_argument("--producer-id", type=int)
    abort.add_argument("--producer-epoch", type=int)
    abort.add_argument("--coordinator-epoch", type=int)


def _partition_args(parser, *, required: bool) -> None:
    parser.add_argument("--topic", required=required, help="topic name")
    parser.add_argument("--partition", type=int, required=required, help="partition number")


def run(args: argparse.Namespace) -> int:
    command = args.transactions_command
    if command == "find-hanging":
        if args.topic is None and args.broker_id is None:
            return _fail("The `find-hanging` command requires either --topic or --broker-id to limit the scope "
                         "of the search", 1)
        if args.partition is not None and args.topic is None:
            return _fail("The --partition argument requires --topic to be provided", 1)
    try:
        admin = txn.connect(args.bootstrap, request_timeout_ms=15000)
    except Errors.KafkaError as exc:
        return _fail(f"cannot connect to {args.bootstrap}: {exc}", 1)
    try:
        print(_COMMANDS[command](admin, args))
    except txn.TransactionCommandError as exc:
        return _fail(str(exc), 1)
    except Errors.KafkaError as exc:
        return _fail(f"{_WHAT[command]}: {type(exc).__name__}: {exc}", 1)
    finally:
        admin.close()
    return 0


def _list(admin, args) -> str:
    return format_table(LIST_HEADER, txn.list_transactions(admin))


def _describe(admin, args) -> str:
    d = txn.describe_transaction(admin, args.transactional_id)
    started = d.transaction_start_time_ms if d.transaction_start_time_ms >= 0 else None
    duration = int(time.time() * 1000) - started if started is not None else None
    partitions = ",".join(f"{tp.topic}-{tp.partition}" for tp in sorted(d.topic_partitions))
    return format_table(DESCRIBE_HEADER, [(d.coordinator_id, args.transactional_id, d.producer_id, d.producer_epoch,
                                           d.state.value, d.transaction_timeout_ms, _none(started), _none(duration),
                                           partitions)])


def _describe_producers(admin, args) -> str:
    producers = txn.describe_producers(admin, TopicPartition(args.topic, args.partition), args.broker_id)
    return format_table(PRODUCERS_HEADER, [
        (p.producer_id, p.producer_epoch, p.coordinator_epoch, p.last_sequence, p.last_timestamp,
         p.current_transaction_start_offset if p.current_transaction_start_offset >= 0 else "None")
        for p in producers])


def _find_hanging(admin, args) -> str:
    now = int(time.time() * 1000)
    hanging = txn.find_hanging(admin, topic=args.topic, partition=args.partition, broker_id=args.broker_id,
                               max_transaction_timeout_ms=args.max_transaction_timeout * 60_000, now_ms=now)
    return format_table(HANGING_HEADER, [
        (h.topic, h.partition, h.producer.producer_id, h.producer.producer_epoch, h.producer.coordinator_epoch,
         h.producer.current_transaction_start_offset, h.producer.last_timestamp,
         (now - h.producer.last_timestamp) // 60_000) for h in hanging])


def _abort(admin, args) -> str:
    spec = txn.abort(admin, TopicPartition(args.topic, args.partition), start_offset=args.start_offset,
                     producer_id=args.producer_id, producer_epoch=args.producer_epoch,
                     coordinator_epoch=args.coordinator_epoch)
    return (f"Aborted the transaction of producer {spec.producer_id} (epoch {spec.producer_epoch}) on "
            f"{args.topic}-{args.partition}.")


def _none(value) -> object:
    return "None" if value is None else value


_COMMANDS = {"list": _list, "describe": _describe, "describe-producers": _describe_producers,
             "find-hanging": _find_hanging, "abort": _abort}
_WHAT = {"list": "Failed to list transactions", "describe": "Failed to describe transaction state",
         "describe-producers": "Failed to describe producers", "find-hanging": "Failed to find hanging transactions",
         "abort": "Failed to abort transaction"}


def _fail(message: str, code: int) -> int:
    print(message, file=sys.stderr)
    return code
