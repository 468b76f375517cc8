"""Every checkpoint file of a broker garbled after kill -9: the engine warns, recovers from
the segments themselves, starts, and serves every record."""
from tests.engine.cluster.helpers import create_topic
from tests.support.partition_io import read_values, send_values


def test_garbled_checkpoints_warn_and_start(engine_factory, tmp_path, topic_name):
    data_dir = tmp_path / "data"
    engine = engine_factory(brokers=1, data_dir=data_dir)
    create_topic(engine.bootstrap, topic_name, 1, 1)
    values = [f"v{i}".encode() for i in range(50)]
    send_values(engine.bootstrap, topic_name, values)
    assert engine.terminate() == 0     # every checkpoint written...
    engine.start()
    engine.kill()                      # ...and then no clean shutdown

    log_dir = data_dir / "broker-0"
    checkpoints = [log_dir / name for name in ("recovery-point-offset-checkpoint", "log-start-offset-checkpoint",
                                               "replication-offset-checkpoint")]
    checkpoints += list(log_dir.glob("*/leader-epoch-checkpoint"))
    assert all(path.exists() for path in checkpoints)
    for path in checkpoints:
        path.write_bytes(b"0\n3\n\xff\x00garbled")

    engine.start()
    assert read_values(engine.bootstrap, topic_name, len(values)) == values
    log_text = engine.log_path.read_text(errors="replace")
    assert log_text.count("; ignoring it:") == 3 and "rebuilt from the log's batches" in log_text
    assert "Traceback" not in log_text
    assert engine.terminate() == 0
