"""The console against an engine that requires SASL OAUTHBEARER, with the authorizer on: a
cluster row naming a token endpoint, an OAuth client id and the CONSOLE_SECRET_ variable of its
secret gets a token with the client credentials grant (a local token endpoint handing out JWTs
the engine checks against the identity provider's JWKS), and the token's subject is the
principal the ACLs see. Topics and groups list; the token is fetched once and reused; a wrong
secret is a readable sentence on the cluster's page; the form refuses an incomplete or wrong
login; the audit log and the pages never hold the secret; the Spark data source logs in by
itself through librdkafka's oidc method with the same client."""
import html
import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from console.accounts.models import AuditLogEntry
from console.analytics.services import source_options
from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.clusters.services import cluster_create
from console.kafka_gateway import oauth_tokens
from console.kafka_gateway.producer import produce
from console.kafka_gateway.spark_source import KafkaReader, read_range
from tests.support.acls import admin_client, grant, start_acl_engine
from tests.support.logs import capture_debug_logs
from tests.support.oauth import IdentityProvider
from tests.support.oauth_endpoint import TokenEndpoint

CLIENT_ID, SECRET = "kafka-console", "Oauth-Client-5ecret"
SECRET_ENV = "CONSOLE_SECRET_OAUTH_TEST_CLIENT"
WRONG_SECRET = "Wrong-Client-5ecret"


@pytest.fixture(scope="module")
def token_endpoint(tmp_path_factory):
    endpoint = TokenEndpoint(IdentityProvider(tmp_path_factory.mktemp("idp")), {CLIENT_ID: SECRET}).start()
    yield endpoint
    endpoint.stop()


@pytest.fixture(scope="module")
def oauth_engine(tmp_path_factory, token_endpoint):
    """One broker taking OAUTHBEARER; the console's client (principal User:kafka-console) is
    granted everything on the cluster, its topics and groups, as an operator's console would be."""
    engine = start_acl_engine(tmp_path_factory.mktemp("console-oauth"), brokers=1, extra_args=[
        "--config", "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,OAUTHBEARER",
        *token_endpoint.provider.broker_configs()])
    admin = admin_client(engine.bootstrap)
    try:
        for resource_type, name in (("CLUSTER", "kafka-cluster"), ("TOPIC", "*"), ("GROUP", "*")):
            grant(admin, f"User:{CLIENT_ID}", "ALL", resource_type, name)
    finally:
        admin.close()
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()


def oauth_cluster(engine, endpoint, name: str, **fields) -> Cluster:
    return cluster_create(name=name, bootstrap_servers=engine.bootstrap, security_protocol="SASL_PLAINTEXT",
                          sasl_mechanism="OAUTHBEARER", oauth_token_endpoint_url=endpoint.url,
                          oauth_client_id=CLIENT_ID, oauth_client_secret_env=SECRET_ENV, **fields)


@pytest.fixture
def client_secret(monkeypatch):
    monkeypatch.setenv(SECRET_ENV, SECRET)


def test_the_console_logs_in_with_its_oauth_client_and_lists_topics_and_groups(db, oauth_engine, token_endpoint,
                                                                              client_secret, viewer_client, caplog):
    capture_debug_logs(caplog)       # kafka-python logs what it sends at DEBUG: never the token
    cluster = oauth_cluster(oauth_engine, token_endpoint, "oauth cluster", oauth_scope="kafka")
    topic, group = "console-oauth-topic", "console-oauth-group"
    with cluster_gateway(cluster) as gw:
        gw.create_topic(name=topic, num_partitions=1, replication_factor=1)
    produce(cluster.connection_settings(), topic=topic, key=None, value=b"by token", copies=3)
    with cluster_gateway(cluster) as gw:
        coordinator = gw.groups.find_coordinators([group]).found[group]
        assert gw.groups.commit_offsets(group, coordinator=coordinator, offsets={(topic, 0): (2, "")}) == {}

    topics = viewer_client.get(reverse("topics:list", args=[cluster.pk]))
    assert topics.status_code == 200 and topic in topics.content.decode()
    groups = viewer_client.get(reverse("groups:list", args=[cluster.pk]))
    assert groups.status_code == 200 and group in groups.content.decode()
    assert "kafka" in token_endpoint.scopes          # the scope went with the token request
    assert SECRET not in caplog.text and not any(token in caplog.text for token in token_endpoint.issued)
    assert "<SASL credentials hidden>" in caplog.text


def test_the_token_is_fetched_once_and_reused_across_gateway_calls(db, oauth_engine, token_endpoint,
                                                                   client_secret):
    oauth_tokens.TOKENS.clear()
    cluster = oauth_cluster(oauth_engine, token_endpoint, "oauth cluster, reused token")
    before = token_endpoint.calls[CLIENT_ID]
    for _ in range(3):
        with cluster_gateway(cluster) as gw:
            assert gw.metadata().brokers
    produce(cluster.connection_settings(), topic="console-oauth-reuse", key=None, value=b"x")
    assert token_endpoint.calls[CLIENT_ID] == before + 1


def test_a_wrong_client_secret_is_a_readable_sentence_on_the_clusters_page(db, oauth_engine, token_endpoint,
                                                                           monkeypatch, viewer_client, caplog):
    capture_debug_logs(caplog)
    monkeypatch.setenv(SECRET_ENV, WRONG_SECRET)
    cluster = oauth_cluster(oauth_engine, token_endpoint, "oauth cluster, wrong secret")
    page = viewer_client.get(reverse("clusters:overview", args=[cluster.pk]))
    text = html.unescape(page.content.decode())
    assert page.status_code == 503 and "Traceback" not in text
    assert (f"The OAuth token endpoint {token_endpoint.url} refused the client 'kafka-console': HTTP 401, "
            "invalid_client (Client authentication failed.)") in text, text[:3000]
    topics = html.unescape(viewer_client.get(reverse("topics:list", args=[cluster.pk])).content.decode())
    assert "refused the client 'kafka-console'" in topics
    assert WRONG_SECRET not in text + topics + caplog.text and SECRET not in text + topics + caplog.text


def test_the_form_refuses_an_incomplete_or_wrong_oauth_login(db, console_admin_client):
    fields = {"name": "oauth", "bootstrap_servers": "kafka-1:9093", "security_protocol": "SASL_SSL",
              "sasl_mechanism": "OAUTHBEARER", "oauth_token_endpoint_url": "https://idp.example.com/oauth2/token",
              "oauth_client_id": "console", "oauth_client_secret_env": "CONSOLE_SECRET_OAUTH"}
    form = console_admin_client.get(reverse("clusters:add")).content.decode()
    assert "<legend>OAuth 2 client credentials (SASL mechanism OAUTHBEARER)</legend>" in form
    assert "sasl.oauthbearer.token.endpoint.url" in form          # the help text names Kafka's config
    refusals = {
        "no endpoint": ({"oauth_token_endpoint_url": ""}, "OAUTHBEARER needs the identity provider's token endpoint URL."),
        "no client id": ({"oauth_client_id": ""}, "OAUTHBEARER needs the OAuth client id."),
        "no secret": ({"oauth_client_secret_env": ""}, "OAUTHBEARER needs the environment variable holding the "
                                                       "OAuth client secret."),
        "bad URL": ({"oauth_token_endpoint_url": "ftp://idp.example.com/token"}, "is not an http:// or https:// URL"),
        "no host": ({"oauth_token_endpoint_url": "https:///token"}, "is not an http:// or https:// URL"),
        "credentials in the URL": ({"oauth_token_endpoint_url": "https://console:pw@idp.example.com/token"},
                                   "without a user or password in it"),
        "secret outside the prefix": ({"oauth_client_secret_env": "SECRET_KEY"},
                                      "environment variables named CONSOLE_SECRET_"),
        "a SASL password too": ({"sasl_password_env": "CONSOLE_SECRET_PASSWORD"},
                                "OAUTHBEARER logs in with the OAuth client's token"),
        "not over SASL": ({"security_protocol": "SSL"}, "OAUTHBEARER is a SASL mechanism"),
        "with SCRAM": ({"sasl_mechanism": "SCRAM-SHA-512", "sasl_username": "u",
                        "sasl_password_env": "CONSOLE_SECRET_PASSWORD"},
                       "Only the SASL mechanism OAUTHBEARER uses the OAuth client's settings"),
    }
    for case, (change, sentence) in refusals.items():
        response = console_admin_client.post(reverse("clusters:add"), {**fields, **change})
        text = html.unescape(response.content.decode())
        assert response.status_code == 400 and sentence in text, (case, text[:3000])
        assert text.count(sentence) == 1, case
    assert not Cluster.objects.filter(name="oauth").exists()
    assert console_admin_client.post(reverse("clusters:add"), {**fields, "oauth_scope": "kafka"}).status_code == 302
    assert Cluster.objects.get(name="oauth").oauth_scope == "kafka"


def test_the_audit_entry_of_an_oauth_cluster_names_the_variable_never_the_secret(db, console_admin_client,
                                                                                  token_endpoint, monkeypatch):
    monkeypatch.setenv(SECRET_ENV, SECRET)
    response = console_admin_client.post(reverse("clusters:add"), {
        "name": "oauth audited", "bootstrap_servers": "kafka-1:9093", "security_protocol": "SASL_SSL",
        "sasl_mechanism": "OAUTHBEARER", "oauth_token_endpoint_url": token_endpoint.url,
        "oauth_client_id": CLIENT_ID, "oauth_client_secret_env": SECRET_ENV, "oauth_scope": "kafka"})
    assert response.status_code == 302
    entry = AuditLogEntry.objects.get(action="cluster.add", target="oauth audited", result=AuditLogEntry.OK)
    assert entry.details == {"bootstrap_servers": "kafka-1:9093", "security_protocol": "SASL_SSL",
                             "sasl_mechanism": "OAUTHBEARER", "oauth_token_endpoint_url": token_endpoint.url,
                             "oauth_client_id": CLIENT_ID, "oauth_client_secret_env": SECRET_ENV,
                             "oauth_scope": "kafka"}
    assert SECRET not in str(entry.details) and SECRET not in repr(Cluster.objects.get(name="oauth audited")
                                                                   .connection_settings())


def test_the_spark_source_logs_in_with_librdkafkas_oidc_and_logs_no_secret(db, oauth_engine, token_endpoint,
                                                                           client_secret, caplog, capfd):
    capture_debug_logs(caplog)
    cluster = oauth_cluster(oauth_engine, token_endpoint, "oauth cluster for spark", oauth_scope="kafka")
    topic = "console-oauth-spark"
    with cluster_gateway(cluster) as gw:
        gw.create_topic(name=topic, num_partitions=2, replication_factor=1)
    for i in range(6):
        produce(cluster.connection_settings(), topic=topic, key=None, value=f"v{i}".encode(), partition=i % 2)

    options = source_options(cluster)
    assert options == {
        "kafka.bootstrap.servers": oauth_engine.bootstrap, "kafka.security.protocol": "SASL_PLAINTEXT",
        "kafka.sasl.mechanism": "OAUTHBEARER", "kafka.sasl.oauthbearer.method": "oidc",
        "kafka.sasl.oauthbearer.token.endpoint.url": token_endpoint.url,
        "kafka.sasl.oauthbearer.client.id": CLIENT_ID, "kafka.sasl.oauthbearer.client.secret": SECRET,
        "kafka.sasl.oauthbearer.scope": "kafka"}

    # The data source's own reader, as Spark's Python workers run it: librdkafka asks the token
    # endpoint itself (its call counted), and the engine takes its token.
    before = token_endpoint.calls[CLIENT_ID]
    reader = KafkaReader({**options, "subscribe": topic, "kafka.debug": "security"})
    ranges = reader.partitions()
    values = sorted(value for r in ranges for batch in read_range(reader.conf, r)
                    for value in batch.column("value").to_pylist())
    assert values == sorted(f"v{i}".encode() for i in range(6))
    assert token_endpoint.calls[CLIENT_ID] > before
    out, err = capfd.readouterr()
    assert "OAUTHBEARER" in err, err[:2000]     # librdkafka did log (debug=security)
    assert SECRET not in out + err + caplog.text
    assert not any(token in out + err + caplog.text for token in token_endpoint.issued)


def test_cluster_add_registers_an_oauth_cluster_from_the_command_line(db):
    call_command("cluster_add", "oauth prod", "kafka-1:9093", "--security-protocol", "SASL_SSL",
                 "--sasl-mechanism", "OAUTHBEARER", "--oauth-token-endpoint-url", "https://idp.example.com/token",
                 "--oauth-client-id", "console", "--oauth-client-secret-env", "CONSOLE_SECRET_OAUTH",
                 "--oauth-scope", "kafka", stdout=io.StringIO())
    row = Cluster.objects.get(name="oauth prod")
    assert (row.sasl_mechanism, row.oauth_token_endpoint_url, row.oauth_client_id, row.oauth_client_secret_env,
            row.oauth_scope) == ("OAUTHBEARER", "https://idp.example.com/token", "console", "CONSOLE_SECRET_OAUTH",
                                 "kafka")
    with pytest.raises(CommandError, match="OAUTHBEARER needs the identity provider's token endpoint URL"):
        call_command("cluster_add", "oauth half", "kafka-1:9093", "--security-protocol", "SASL_SSL",
                     "--sasl-mechanism", "OAUTHBEARER", "--oauth-client-id", "console",
                     "--oauth-client-secret-env", "CONSOLE_SECRET_OAUTH")
