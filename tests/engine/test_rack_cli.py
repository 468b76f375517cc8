"""`engine serve --rack ID=RACK`: each broker's broker.rack, advertised in Metadata."""
import subprocess
import sys

from kafka.admin import KafkaAdminClient

from tests.support.engine_process import ROOT, EngineProcess


def test_racks_are_advertised_per_broker(tmp_path):
    engine = EngineProcess(tmp_path / "data", brokers=3, extra_args=["--rack", "0=a", "--rack", "1=b"]).start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap)
        try:
            brokers = {b["broker_id"]: b["rack"] for b in admin.describe_cluster()["brokers"]}
        finally:
            admin.close()
        assert brokers == {0: "a", 1: "b", 2: None}
    finally:
        engine.kill()


def test_a_rack_for_an_unknown_broker_is_refused(tmp_path):
    result = subprocess.run([sys.executable, "-m", "engine", "serve", "--data-dir", str(tmp_path / "d"),
                             "--brokers", "2", "--port", "1", "--rack", "5=a"], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    assert "--rack expects ID=RACK with ID in 0..1" in result.stderr
