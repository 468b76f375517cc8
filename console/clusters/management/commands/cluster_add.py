"""`manage.py cluster_add NAME HOST:PORT[,HOST:PORT...] [--security-protocol ...] [--sasl-...] [--oauth-...]
    [--ssl-...]`"""
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from console.clusters.models import Cluster
from console.clusters.services import TLS_FIELDS, cluster_create


class Command(BaseCommand):
    help = ("Register a Kafka cluster (ours or Apache Kafka). SASL passwords and OAuth client secrets stay in the "
            "environment.")

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("bootstrap_servers")
        parser.add_argument("--security-protocol", default="PLAINTEXT", choices=[p for p, _ in Cluster.PROTOCOLS])
        parser.add_argument("--sasl-mechanism", default="", choices=[m for m, _ in Cluster.MECHANISMS])
        parser.add_argument("--sasl-username", default="")
        parser.add_argument("--sasl-password-env", default="",
                            help="name of the environment variable (CONSOLE_SECRET_*) that holds the SASL password")
        parser.add_argument("--oauth-token-endpoint-url", default="",
                            help="OAUTHBEARER: the identity provider's OAuth 2 token endpoint (https:// or http://)")
        parser.add_argument("--oauth-client-id", default="", help="OAUTHBEARER: the console's OAuth client id")
        parser.add_argument("--oauth-client-secret-env", default="",
                            help="OAUTHBEARER: the environment variable (CONSOLE_SECRET_*) holding the client secret")
        parser.add_argument("--oauth-scope", default="",
                            help="OAUTHBEARER: the scope to ask tokens for (optional)")
        parser.add_argument("--admin-token-env", default="",
                            help="our engine: the environment variable (CONSOLE_SECRET_*) holding its admin token")
        parser.add_argument("--ssl-cafile", default="",
                            help="SSL, SASL_SSL: the CA certificates to trust, a PEM file or a PKCS12 trust store")
        parser.add_argument("--ssl-certfile", default="",
                            help="the console's client certificate, for mTLS: a PEM file, or a PKCS12 key store "
                                 "holding the key and its chain")
        parser.add_argument("--ssl-keyfile", default="",
                            help="a PEM certificate's private key (PEM); none for a PKCS12 key store")
        parser.add_argument("--ssl-key-password-env", default="",
                            help="the environment variable (CONSOLE_SECRET_*) holding an encrypted PEM key's "
                                 "password or the PKCS12 stores' password")

    def handle(self, *args, **options):
        try:
            cluster = cluster_create(name=options["name"], bootstrap_servers=options["bootstrap_servers"],
                                     security_protocol=options["security_protocol"],
                                     sasl_mechanism=options["sasl_mechanism"],
                                     sasl_username=options["sasl_username"],
                                     sasl_password_env=options["sasl_password_env"],
                                     admin_token_env=options["admin_token_env"],
                                     **{field: options[field] for field in Cluster.OAUTH_FIELDS},
                                     **{field: options[field] for field in TLS_FIELDS})
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        self.stdout.write(f"Cluster {cluster.name} registered (id {cluster.pk}).")
