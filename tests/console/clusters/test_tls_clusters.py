"""The console against a listener that requires a client certificate (SSL with
ssl.client.auth=required): a cluster row naming the CA file, the console's certificate and its
key lists topics through the admin client; without the certificate the page says the cluster
could not be reached, readably; the Spark data source gets the same files as librdkafka options."""
import html

import pytest
from cryptography.x509.oid import NameOID
from django.urls import reverse

from console.analytics.services import source_options
from console.clusters.gateway import cluster_gateway
from console.clusters.services import cluster_create
from tests.support.engine_process import EngineProcess, PortTakenError, free_port_range
from tests.support.tls import write_client_certificate, write_self_signed


class TlsEngine:
    def __init__(self, engine: EngineProcess, tls_port: int, server_ca, client) -> None:
        self.engine, self.bootstrap, self.server_ca, self.client = engine, f"127.0.0.1:{tls_port}", server_ca, client


@pytest.fixture(scope="module")
def tls_engine(tmp_path_factory):
    directory = tmp_path_factory.mktemp("console-mtls")
    keystore, server_ca = write_self_signed(directory)
    client, client_ca = write_client_certificate(directory, [(NameOID.COMMON_NAME, "console")], "console")
    for _ in range(5):
        base = free_port_range(2)
        engine = EngineProcess(directory / "data", brokers=1, admin=False, extra_args=[
            "--listener", f"INTERNAL=PLAINTEXT://127.0.0.1:{base}", "--listener", f"CERTS=SSL://127.0.0.1:{base + 1}",
            "--inter-broker-listener", "INTERNAL",
            "--config", f"ssl.keystore.location={keystore}",
            "--config", "listener.name.certs.ssl.client.auth=required",
            "--config", f"listener.name.certs.ssl.truststore.location={client_ca}"])
        engine.port = base          # the PLAINTEXT listener: where the readiness check asks
        try:
            engine.start(timeout=60)
        except PortTakenError:
            continue
        running = TlsEngine(engine, base + 1, server_ca, client)
        yield running
        if engine.alive():
            assert engine.terminate() == 0, engine.log_text()
        return
    raise RuntimeError("no free ports")


def test_the_console_logs_in_with_its_client_certificate_and_lists_topics(db, tls_engine, viewer_client):
    cluster = cluster_create(name="mtls cluster", bootstrap_servers=tls_engine.bootstrap, security_protocol="SSL",
                             ssl_cafile=str(tls_engine.server_ca), ssl_certfile=str(tls_engine.client),
                             ssl_keyfile=str(tls_engine.client))
    with cluster_gateway(cluster) as gw:
        gw.create_topic(name="console-mtls-topic", num_partitions=1, replication_factor=1)
    page = viewer_client.get(reverse("topics:list", args=[cluster.pk]))
    assert page.status_code == 200 and "console-mtls-topic" in page.content.decode()
    assert source_options(cluster) == {
        "kafka.bootstrap.servers": tls_engine.bootstrap, "kafka.security.protocol": "SSL",
        "kafka.ssl.ca.location": str(tls_engine.server_ca), "kafka.ssl.certificate.location": str(tls_engine.client),
        "kafka.ssl.key.location": str(tls_engine.client)}


def test_without_its_certificate_the_cluster_reads_as_unreachable(db, tls_engine, viewer_client):
    cluster = cluster_create(name="mtls cluster, no certificate", bootstrap_servers=tls_engine.bootstrap,
                             security_protocol="SSL", ssl_cafile=str(tls_engine.server_ca))
    page = viewer_client.get(reverse("topics:list", args=[cluster.pk]))
    text = html.unescape(page.content.decode())
    assert page.status_code == 503 and "Traceback" not in text
    # Not "did not answer in time": the console's own handshake says what TLS refused.
    assert f"the TLS handshake with {tls_engine.bootstrap} failed: the broker wants a client certificate" in text, \
        text[:3000]


def test_a_broker_certificate_the_console_does_not_trust_is_said_so(db, tls_engine, viewer_client):
    cluster = cluster_create(name="mtls cluster, no CA", bootstrap_servers=tls_engine.bootstrap,
                             security_protocol="SSL", ssl_certfile=str(tls_engine.client),
                             ssl_keyfile=str(tls_engine.client))
    text = html.unescape(viewer_client.get(reverse("topics:list", args=[cluster.pk])).content.decode())
    assert "the console does not trust the broker's certificate" in text and "name the cluster's CA file" in text


def test_a_relative_file_path_is_refused_with_a_sentence(db, tls_engine):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="is not an absolute path"):
        cluster_create(name="mtls relative", bootstrap_servers=tls_engine.bootstrap, security_protocol="SSL",
                       ssl_certfile="console.pem")
