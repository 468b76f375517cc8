import pytest
from django.core.management import CommandError, call_command

from console.accounts.roles import role_of
from console.clusters.models import Cluster


def test_console_user_takes_the_password_from_the_environment(db, monkeypatch, django_user_model):
    monkeypatch.setenv("NEW_USER_PASSWORD", "amber-kettle-9-rivers")
    call_command("console_user", "ops", "--role", "operator", "--password-env", "NEW_USER_PASSWORD")
    user = django_user_model.objects.get(username="ops")
    assert role_of(user) == "operator" and user.check_password("amber-kettle-9-rivers")
    monkeypatch.delenv("NEW_USER_PASSWORD")
    with pytest.raises(CommandError, match="NEW_USER_PASSWORD is empty"):
        call_command("console_user", "ops2", "--role", "viewer", "--password-env", "NEW_USER_PASSWORD")


@pytest.mark.parametrize("password, why", [("pw-1", "too short"), ("password123", "too common"),
                                           ("8675309123456", "entirely numeric")])
def test_weak_passwords_are_refused_by_djangos_validators(db, monkeypatch, django_user_model, password, why):
    monkeypatch.setenv("NEW_USER_PASSWORD", password)
    with pytest.raises(CommandError, match=why):
        call_command("console_user", "weak", "--role", "viewer", "--password-env", "NEW_USER_PASSWORD")
    assert not django_user_model.objects.filter(username="weak").exists()


def test_cluster_add(db):
    call_command("cluster_add", "prod", "kafka-1:9092,kafka-2:9092", "--security-protocol", "SASL_SSL",
                 "--sasl-mechanism", "PLAIN", "--sasl-username", "console", "--sasl-password-env", "CONSOLE_SECRET_PROD_PW")
    prod = Cluster.objects.get(name="prod")
    assert (prod.bootstrap_servers, prod.sasl_password_env, prod.is_bundled) == ("kafka-1:9092,kafka-2:9092",
                                                                                "CONSOLE_SECRET_PROD_PW", False)
    with pytest.raises(CommandError, match="CONSOLE_SECRET_"):
        call_command("cluster_add", "leaky", "kafka-1:9092", "--sasl-password-env", "SECRET_KEY")
    with pytest.raises(CommandError, match="host:port"):
        call_command("cluster_add", "broken", "kafka-1")
