"""The console against a listener that requires a client certificate, with the stores a Kafka
operator has: keytool's PKCS12 trust store (holding the broker's certificate) as the CA file,
keytool's PKCS12 key store as the client certificate file, their password in a CONSOLE_SECRET_
variable. The console lists topics through them; a wrong password reads as a sentence on the
cluster's pages, never a traceback or the password; a JKS store is refused by the form with the
keytool command that converts it; the Spark data source reads through librdkafka with the key
store's path and the trust store's certificates as PEM text, and no log shows the password."""
import html

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from django.urls import reverse

from console.accounts.models import AuditLogEntry
from console.analytics.services import source_options
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.clusters.services import cluster_create
from console.kafka_gateway.errors import GatewayError
from console.kafka_gateway.producer import produce
from console.kafka_gateway.spark_source import KafkaReader, read_range
from tests.support.engine_process import EngineProcess, PortTakenError, free_port_range
from tests.support.keytool import exported_certificate, key_store, trust_store
from tests.support.logs import capture_debug_logs

PASSWORD = "p12-store-secret"
PASSWORD_ENV = "CONSOLE_SECRET_TLS_STORES"


class StoreEngine:
    def __init__(self, engine: EngineProcess, tls_port: int, directory) -> None:
        self.engine, self.bootstrap, self.directory = engine, f"127.0.0.1:{tls_port}", directory
        self.trust_store = directory / "brokers.p12"           # the console's CA file
        self.key_store = directory / "console.p12"             # the console's client certificate
        self.broker_certificate = directory / "broker.pem"


@pytest.fixture(scope="module")
def store_engine(tmp_path_factory):
    """An engine whose SSL listener has a keytool PKCS12 key store and requires client
    certificates its PKCS12 trust store holds; the console's stores made by keytool too."""
    directory = tmp_path_factory.mktemp("console-pkcs12")
    broker_store = key_store(directory / "broker-keystore.p12", PASSWORD)
    exported_certificate(broker_store, PASSWORD, directory / "broker.pem")
    trust_store(directory / "brokers.p12", PASSWORD, directory / "broker.pem")
    key_store(directory / "console.p12", PASSWORD, common_name="console")
    exported_certificate(directory / "console.p12", PASSWORD, directory / "console-certificate.pem")
    clients = trust_store(directory / "clients.p12", PASSWORD, directory / "console-certificate.pem")
    for _ in range(5):
        base = free_port_range(2)
        engine = EngineProcess(directory / "data", brokers=1, admin=False, extra_args=[
            "--listener", f"INTERNAL=PLAINTEXT://127.0.0.1:{base}", "--listener", f"CERTS=SSL://127.0.0.1:{base + 1}",
            "--inter-broker-listener", "INTERNAL",
            "--config", f"ssl.keystore.location={broker_store}", "--config", f"ssl.keystore.password={PASSWORD}",
            "--config", "listener.name.certs.ssl.client.auth=required",
            "--config", f"listener.name.certs.ssl.truststore.location={clients}",
            "--config", f"listener.name.certs.ssl.truststore.password={PASSWORD}"])
        engine.port = base          # the PLAINTEXT listener: where the readiness check asks
        try:
            engine.start(timeout=60)
        except PortTakenError:
            continue
        running = StoreEngine(engine, base + 1, directory)
        yield running
        assert PASSWORD not in engine.log_text()
        if engine.alive():
            assert engine.terminate() == 0, engine.log_text()
        return
    raise RuntimeError("no free ports")


@pytest.fixture
def store_password(monkeypatch):
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)


def pkcs12_cluster(name: str, store_engine: StoreEngine) -> Cluster:
    return cluster_create(name=name, bootstrap_servers=store_engine.bootstrap, security_protocol="SSL",
                          ssl_cafile=str(store_engine.trust_store), ssl_certfile=str(store_engine.key_store),
                          ssl_key_password_env=PASSWORD_ENV)


def page_text(client, url: str):
    page = client.get(url)
    return page.status_code, html.unescape(page.content.decode())


def test_the_console_lists_topics_through_pkcs12_stores(db, store_engine, store_password, viewer_client, caplog):
    capture_debug_logs(caplog)
    cluster = pkcs12_cluster("pkcs12 cluster", store_engine)
    with cluster_gateway(cluster) as gw:
        gw.create_topic(name="console-pkcs12-topic", num_partitions=1, replication_factor=1)
    status, text = page_text(viewer_client, reverse("topics:list", args=[cluster.pk]))
    assert status == 200 and "console-pkcs12-topic" in text
    assert PASSWORD not in text and PASSWORD not in caplog.text


def test_a_pem_certificate_with_its_encrypted_key_in_another_file(db, store_engine, store_password, viewer_client):
    """The PEM way still works, its key file apart and encrypted with the same variable's password."""
    opened = pkcs12.load_pkcs12(store_engine.key_store.read_bytes(), PASSWORD.encode())
    certificate, key = store_engine.directory / "console-cert.pem", store_engine.directory / "console-key.pem"
    certificate.write_bytes(opened.cert.certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(opened.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                             serialization.BestAvailableEncryption(PASSWORD.encode())))
    cluster = cluster_create(name="pem cluster", bootstrap_servers=store_engine.bootstrap, security_protocol="SSL",
                             ssl_cafile=str(store_engine.broker_certificate), ssl_certfile=str(certificate),
                             ssl_keyfile=str(key), ssl_key_password_env=PASSWORD_ENV)
    with cluster_gateway(cluster) as gw:
        assert gw.metadata().brokers
    assert source_options(cluster) == {
        "kafka.bootstrap.servers": store_engine.bootstrap, "kafka.security.protocol": "SSL",
        "kafka.ssl.ca.location": str(store_engine.broker_certificate),
        "kafka.ssl.certificate.location": str(certificate), "kafka.ssl.key.location": str(key),
        "kafka.ssl.key.password": PASSWORD}


def test_a_wrong_store_password_is_a_sentence_on_the_clusters_pages(db, store_engine, monkeypatch, viewer_client,
                                                                     caplog):
    capture_debug_logs(caplog)
    wrong = "not-the-store-password"
    monkeypatch.setenv(PASSWORD_ENV, wrong)
    cluster = pkcs12_cluster("pkcs12 cluster, wrong password", store_engine)
    reason = (f"the CA file {store_engine.trust_store} is a PKCS12 trust store that the key password does not "
              "open (a wrong password)")
    with pytest.raises(GatewayError) as refused:
        with cluster_gateway(cluster):
            pass
    assert str(refused.value).startswith(f"Cannot connect to {store_engine.bootstrap}: {reason}")
    for url in (reverse("topics:list", args=[cluster.pk]), reverse("clusters:overview", args=[cluster.pk])):
        status, text = page_text(viewer_client, url)
        assert reason in text, (url, text[:3000])
        assert "Traceback" not in text and wrong not in text and PASSWORD not in text
    assert wrong not in caplog.text

    # With the broker's certificate as a PEM CA file, the key store is what the password does not open.
    cluster.ssl_cafile = str(store_engine.broker_certificate)
    cluster.save()
    status, text = page_text(viewer_client, reverse("topics:list", args=[cluster.pk]))
    assert status == 503 and "Traceback" not in text and wrong not in text
    assert (f"the client certificate file {store_engine.key_store} is a PKCS12 key store that the key password "
            "does not open (a wrong password)") in text


def test_the_tls_check_reads_the_stores_too(db, store_engine, store_password, viewer_client):
    """With the PKCS12 trust store and no client certificate, the console's own handshake says
    what the broker refused (it could not, had it not read the trust store)."""
    cluster = cluster_create(name="pkcs12 cluster, no certificate", bootstrap_servers=store_engine.bootstrap,
                             security_protocol="SSL", ssl_cafile=str(store_engine.trust_store),
                             ssl_key_password_env=PASSWORD_ENV)
    status, text = page_text(viewer_client, reverse("topics:list", args=[cluster.pk]))
    assert status == 503 and "Traceback" not in text
    assert f"the TLS handshake with {store_engine.bootstrap} failed: the broker wants a client certificate" in text


def test_without_the_password_the_store_asks_for_one(db, store_engine, viewer_client):
    cluster = cluster_create(name="pkcs12 cluster, no password", bootstrap_servers=store_engine.bootstrap,
                             security_protocol="SSL", ssl_cafile=str(store_engine.broker_certificate),
                             ssl_certfile=str(store_engine.key_store))
    status, text = page_text(viewer_client, reverse("topics:list", args=[cluster.pk]))
    assert status == 503 and "cannot be opened without a password (name the key password's environment " \
                              "variable)" in text


def test_a_jks_store_is_refused_by_the_form_with_the_keytool_command(db, store_engine, console_admin_client, tmp_path):
    jks = key_store(tmp_path / "console.jks", PASSWORD, store_type="JKS")
    fields = {"name": "jks cluster", "bootstrap_servers": store_engine.bootstrap, "security_protocol": "SSL",
              "ssl_cafile": str(store_engine.trust_store), "ssl_certfile": str(jks),
              "ssl_key_password_env": PASSWORD_ENV}
    refused = console_admin_client.post(reverse("clusters:add"), fields)
    text = html.unescape(refused.content.decode())
    assert refused.status_code == 400
    assert (f"The client certificate file {jks} is a JKS store, Java's proprietary format, which the console "
            "cannot read: convert it with `keytool -importkeystore -srckeystore FILE.jks -destkeystore FILE.p12 "
            "-deststoretype PKCS12` and give the .p12 file.") in text
    assert not Cluster.objects.filter(name="jks cluster").exists()

    # keytool's default store type since Java 9 is PKCS12, whatever the file is called: taken.
    named_jks = key_store(tmp_path / "keytool-default.jks", PASSWORD)
    assert console_admin_client.post(reverse("clusters:add"), {**fields, "ssl_certfile": str(named_jks)}) \
        .status_code == 302
    entry = AuditLogEntry.objects.get(action="cluster.add", target="jks cluster", result=AuditLogEntry.OK)
    assert entry.details["ssl_certfile"] == str(named_jks) and PASSWORD not in str(entry.details)


def test_a_key_file_beside_a_pkcs12_key_store_is_refused(db, store_engine, console_admin_client):
    fields = {"name": "key file too", "bootstrap_servers": store_engine.bootstrap, "security_protocol": "SSL",
              "ssl_certfile": str(store_engine.key_store), "ssl_keyfile": str(store_engine.broker_certificate)}
    refused = html.unescape(console_admin_client.post(reverse("clusters:add"), fields).content.decode())
    assert "is a PKCS12 key store, which holds its own key: leave the key file empty." in refused
    as_key = {**fields, "ssl_certfile": str(store_engine.broker_certificate),
              "ssl_keyfile": str(store_engine.key_store)}
    refused = html.unescape(console_admin_client.post(reverse("clusters:add"), as_key).content.decode())
    assert f"The client key file {store_engine.key_store} is a PKCS12 store, not a PEM file" in refused


def test_the_spark_source_reads_through_pkcs12_stores_and_logs_no_password(db, store_engine, store_password,
                                                                          caplog, capfd):
    capture_debug_logs(caplog)
    cluster = pkcs12_cluster("pkcs12 cluster for spark", store_engine)
    topic = "console-pkcs12-spark"
    with cluster_gateway(cluster) as gw:
        gw.create_topic(name=topic, num_partitions=2, replication_factor=1)
    for i in range(10):
        produce(cluster.connection_settings(), topic=topic, key=None, value=f"v{i}".encode(), partition=i % 2)

    options = source_options(cluster)
    assert options["kafka.ssl.keystore.location"] == str(store_engine.key_store)
    assert options["kafka.ssl.keystore.password"] == PASSWORD            # in memory, for librdkafka
    assert x509.load_pem_x509_certificates(options["kafka.ssl.ca.pem"].encode()) == \
        x509.load_pem_x509_certificates(store_engine.broker_certificate.read_bytes())
    assert not {"kafka.ssl.ca.location", "kafka.ssl.certificate.location", "kafka.ssl.key.location"} & set(options)

    # The data source's own reader, as Spark's Python workers run it: librdkafka with those options.
    reader = KafkaReader({**options, "subscribe": topic, "kafka.debug": "security"})
    ranges = reader.partitions()
    values = sorted(value for r in ranges for batch in read_range(reader.conf, r)
                    for value in batch.column("value").to_pylist())
    assert values == sorted(f"v{i}".encode() for i in range(10))
    out, err = capfd.readouterr()
    assert "SSL" in err, err[:2000]   # librdkafka did log (debug=security)
    assert PASSWORD not in out + err and PASSWORD not in caplog.text
