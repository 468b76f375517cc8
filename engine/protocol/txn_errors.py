"""Error codes shared by the transaction APIs' handlers."""
import kafka.errors as Errors

FENCED = Errors.ProducerFencedError.errno


def for_version(code: int, version: int, fenced_since: int) -> int:
    """KIP-588: clients older than `fenced_since` know PRODUCER_FENCED as INVALID_PRODUCER_EPOCH."""
    return Errors.InvalidProducerEpochError.errno if code == FENCED and version < fenced_since else code
