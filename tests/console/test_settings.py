import pytest
from django.core.exceptions import ImproperlyConfigured

from console.env import envbool, envint


def test_settings_load_with_sqlite_by_default(settings):
    assert settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"


@pytest.mark.parametrize("raw", ["maybe", "2"])
def test_envbool_rejects_garbage(monkeypatch, raw):
    monkeypatch.setenv("SOME_FLAG", raw)
    with pytest.raises(ImproperlyConfigured, match="SOME_FLAG"):
        envbool("SOME_FLAG", False)


def test_envint_rejects_garbage(monkeypatch):
    monkeypatch.setenv("SOME_PORT", "80a")
    with pytest.raises(ImproperlyConfigured, match="SOME_PORT"):
        envint("SOME_PORT", 1)


def test_database_url_is_parsed_and_bad_urls_fail_loudly(monkeypatch):
    from console.settings import _database_from_env
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@db.example:5433/console")
    parsed = _database_from_env()
    assert (parsed["ENGINE"], parsed["HOST"], parsed["PORT"], parsed["NAME"]) == (
        "django.db.backends.postgresql", "db.example", 5433, "console")
    monkeypatch.setenv("DATABASE_URL", "nonsense://what")
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL"):
        _database_from_env()


def test_envfloat_reads_numbers_and_rejects_garbage_and_non_positive_values(monkeypatch):
    from console.env import envfloat

    monkeypatch.setenv("LIVE_POLL_SECONDS", "0.5")
    assert envfloat("LIVE_POLL_SECONDS", 1.0) == 0.5
    for raw in ("soon", "0", "-1"):
        monkeypatch.setenv("LIVE_POLL_SECONDS", raw)
        with pytest.raises(ImproperlyConfigured):
            envfloat("LIVE_POLL_SECONDS", 1.0)
    monkeypatch.setenv("KAFKA_METADATA_MAX_AGE_SECONDS", "0")        # where 0 means "off"
    assert envfloat("KAFKA_METADATA_MAX_AGE_SECONDS", 5.0, zero_allowed=True) == 0.0
    for raw in ("-0.5", "nan"):
        monkeypatch.setenv("KAFKA_METADATA_MAX_AGE_SECONDS", raw)
        with pytest.raises(ImproperlyConfigured, match="zero or more"):
            envfloat("KAFKA_METADATA_MAX_AGE_SECONDS", 5.0, zero_allowed=True)


@pytest.mark.parametrize("name, raw, why", [
    ("TOPICS_PER_PAGE", "0", "TOPICS_PER_PAGE='0' is too small: use at least 1"),
    ("TOPICS_PER_PAGE", "-5", "is too small: use at least 1"),
    ("TOPICS_PER_PAGE", "1000000", "is too large: use at most 10000"),
    ("KAFKA_REQUEST_TIMEOUT_MS", "0", "is too small: use at least 100"),
    ("SESSION_COOKIE_AGE", "1", "is too small: use at least 60"),
    ("AXES_FAILURE_LIMIT", "0", "is too small: use at least 1"),
    ("ALLOWED_HOSTS", " , ", "ALLOWED_HOSTS is empty"),
    ("LIVE_MAX_BACKOFF_SECONDS", "0.1", "below LIVE_POLL_SECONDS"),
    ("KAFKA_METADATA_MAX_AGE_SECONDS", "-1", "must be zero or more"),
    ("LOG_DIR_SIZES_MAX_AGE_SECONDS", "soon", "is not a number"),
    ("GROUP_LAG_MAX_AGE_SECONDS", "-5", "must be zero or more"),
    ("GROUP_LAG_WAIT_SECONDS", "a while", "is not a number"),
    ("TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS", "-30", "must be zero or more"),
    ("TRANSACTIONS_PRODUCERS_WAIT_SECONDS", "later", "is not a number"),
    ("CONSOLE_WARMUP_WAIT_SECONDS", "-1", "must be zero or more"),
    ("ENGINE_PORT", "ninety", "ENGINE_PORT='ninety' is not a port number"),
    ("METRICS_MAX_AGE_SECONDS", "-1", "must be zero or more"),
    ("ALERTS_EVALUATION_SECONDS", "0", "must be greater than zero"),
    ("ALERTS_DELIVERY_LEASE_SECONDS", "5", "must be longer than ALERTS_DELIVERY_TIMEOUT_SECONDS"),
    ("ALERTS_DELIVERY_MAX_ATTEMPTS", "0", "is too small: use at least 1"),
    ("EMAIL_PORT", "70000", "is too large"),
])
def test_nonsense_settings_stop_start_up_with_the_reason(name, raw, why):
    """The settings module itself, imported fresh with the bad value."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings", name: raw}
    result = subprocess.run([sys.executable, "-c", "import console.settings"], env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode != 0 and why in result.stderr


def test_the_bundled_cluster_is_where_engine_port_puts_the_engine():
    import os
    import subprocess
    import sys

    env = {key: value for key, value in os.environ.items() if key != "ENGINE_BOOTSTRAP"}
    env.update(DJANGO_SETTINGS_MODULE="console.settings", ENGINE_PORT="19192")
    result = subprocess.run([sys.executable, "-c", "from django.conf import settings; "
                             "print(settings.ENGINE_BOOTSTRAP, settings.ENGINE_BOOTSTRAP_FROM_ENV)"],
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["127.0.0.1:19192,127.0.0.1:19193,127.0.0.1:19194", "True"]
