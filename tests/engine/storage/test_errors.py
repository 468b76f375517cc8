from engine.storage import errors


def test_error_codes_match_kafka():
    assert errors.StorageError.error_code == 56
    assert errors.CorruptRecordError.error_code == 2
    assert errors.RecordTooLargeError.error_code == 10
    assert errors.OffsetOutOfRangeError.error_code == 1
    assert errors.OutOfOrderSequenceError.error_code == 45
    assert errors.InvalidProducerEpochError.error_code == 47
    assert errors.InvalidRecordError.error_code == 87


def test_every_error_is_a_storage_error():
    for cls in (errors.CorruptRecordError, errors.RecordTooLargeError,
                errors.OffsetOutOfRangeError, errors.OutOfOrderSequenceError,
                errors.InvalidProducerEpochError, errors.CorruptIndexError):
        assert issubclass(cls, errors.StorageError)


def test_offset_out_of_range_carries_the_bounds():
    err = errors.OffsetOutOfRangeError(10, 2, 5)
    assert (err.offset, err.log_start_offset, err.log_end_offset) == (10, 2, 5)
