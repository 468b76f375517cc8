"""Client certificates' principals: the subject as RFC 2253 writes it, mapped by Kafka's
ssl.principal.mapping.rules (the cases of Kafka's SslPrincipalMapperTest)."""
import pytest
from cryptography.x509.oid import NameOID

from engine.config import InvalidConfigError
from engine.security.tls_principal import NoMatchingRule, PrincipalMapper, subject_of
from tests.support.tls import write_client_certificate

RULES = ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,"
         "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,"
         "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U,"
         "DEFAULT")


@pytest.mark.parametrize("subject, name", [
    ("CN=Kafka Server,OU=ServiceUsers,O=Org,C=US", "Kafka Server"),
    ("CN=Duke,OU=JavaSoft,O=Sun Microsystems,L=Santa Clara,ST=CA,C=US", "duke@javasoft"),
    ("cn=duke,OU=JavaSoft,O=Sun Microsystems", "DUKE"),
    ("OU=JavaSoft,O=Sun Microsystems,C=US", "OU=JavaSoft,O=Sun Microsystems,C=US"),
])
def test_rules_apply_in_order(subject, name):
    assert PrincipalMapper(RULES).name(subject) == name


def test_default_is_the_whole_subject_and_no_matching_rule_refuses():
    assert PrincipalMapper("DEFAULT").name("CN=alice,O=Acme") == "CN=alice,O=Acme"
    with pytest.raises(NoMatchingRule):
        PrincipalMapper("RULE:^CN=(.*)$/$1/").name("O=Acme")


def test_a_group_number_beyond_the_groups_is_literal():
    assert PrincipalMapper("RULE:^CN=(.*)$/$1-$2/").name("CN=bob") == "bob-$2"


@pytest.mark.parametrize("rules", ["RULE:^CN=(.*$/$1/", "NOTARULE"])
def test_bad_rules_are_refused_at_start(rules):
    with pytest.raises(InvalidConfigError, match="ssl.principal.mapping.rules"):
        PrincipalMapper(rules)


def test_the_subject_reads_most_specific_first(tmp_path):
    keystore, _ = write_client_certificate(tmp_path, [(NameOID.COUNTRY_NAME, "US"), (NameOID.ORGANIZATION_NAME, "Acme"),
                                                      (NameOID.COMMON_NAME, "alice")])
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    certificate = x509.load_pem_x509_certificate(keystore.read_bytes().split(b"-----END PRIVATE KEY-----\n")[1])
    assert subject_of(certificate.public_bytes(serialization.Encoding.DER)) == "CN=alice,O=Acme,C=US"
