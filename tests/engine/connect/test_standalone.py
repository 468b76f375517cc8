"""`python -m engine connect standalone WORKER.properties CONNECTOR.properties...`: the
connectors from the files run at once, source offsets live in offset.storage.file.filename, a
clean restart resumes where it stopped (nothing sent twice), and a bad worker config stops the
command with Connect's sentence."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.support.connect_worker import ConnectWorker, request, running
from tests.support.engine_process import ROOT
from tests.support.groups import create_topic
from tests.support.waiting import wait_until


def test_connectors_from_properties_files_run_and_resume_after_a_restart(connect_engine, tmp_path):
    create_topic(connect_engine.bootstrap, "standalone-lines", 1)
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("one\ntwo\n")
    connectors = [{"name": "sa-source", "connector.class": "FileStreamSource", "file": str(source),
                   "topic": "standalone-lines"},
                  {"name": "sa-sink", "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
                   "file": str(sink), "topics": "standalone-lines"}]
    worker = ConnectWorker(tmp_path, connect_engine.bootstrap, group="", mode="standalone", connectors=connectors,
                           name="standalone").start()
    try:
        assert sorted(request(worker, "GET", "/connectors")[1]) == ["sa-sink", "sa-source"]
        wait_until(lambda: sink.exists() and sink.read_text() == "one\ntwo\n", 60, message="two lines through")
        offsets = tmp_path / "standalone.offsets"
        wait_until(lambda: offsets.exists() and json.loads(offsets.read_text()) ==
                   [["sa-source", {"filename": str(source)}, {"position": 8}]], 30, message="the offsets file")
        assert worker.terminate() == 0
        with open(source, "a") as f:
            f.write("three\n")
        worker.start()
        wait_until(lambda: running(worker, "sa-source") and sink.read_text() == "one\ntwo\nthree\n", 60,
                   message="the third line, and only it")
    finally:
        if worker.alive():
            worker.terminate()


def test_a_bad_worker_config_stops_with_connects_sentence(tmp_path):
    properties = tmp_path / "bad.properties"
    properties.write_text("bootstrap.servers=127.0.0.1:1\noffset.flush.interval.ms=soon\n"
                          "offset.storage.file.filename=/tmp/x\n")
    result = subprocess.run([sys.executable, "-m", "engine", "connect", "standalone", str(properties)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "Stopping due to error: Invalid value soon for configuration offset.flush.interval.ms: Not a number of " \
           "type LONG" in result.stderr
    properties.write_text("bootstrap.servers=127.0.0.1:9\nlisteners=http://127.0.0.1:0\n")
    result = subprocess.run([sys.executable, "-m", "engine", "connect", "distributed", str(properties)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert 'Missing required configuration "group.id" which has no default value.' in result.stderr
