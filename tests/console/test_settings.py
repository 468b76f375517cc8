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
