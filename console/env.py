"""Settings helpers that fail loudly on bad values (as healthchecks' `hc/settings.py` does)."""
import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def envbool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use one of {sorted(_TRUE | _FALSE)})")


def envint(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={raw!r} is too small: use at least {minimum}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name}={raw!r} is too large: use at most {maximum}")
    return value


def envfloat(name: str, default: float, *, zero_allowed: bool = False) -> float:
    """A positive number of (usually) seconds; `zero_allowed` where 0 means "off"."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None
    if value < 0 or (value == 0 and not zero_allowed) or value != value:
        raise ImproperlyConfigured(f"{name}={raw!r} must be {'zero or more' if zero_allowed else 'greater than zero'}")
    return value


def envstr(name: str, default: str) -> str:
    return os.environ.get(name, default)


def envlist(name: str, default: str) -> list[str]:
    """Comma-separated values; an empty list fails (ALLOWED_HOSTS="" would refuse every request)."""
    values = [v.strip() for v in os.environ.get(name, default).split(",") if v.strip()]
    if not values:
        raise ImproperlyConfigured(f"{name} is empty: give at least one value, comma-separated")
    return values


def env_spark_conf(environ=None) -> dict[str, str]:
    """Spark settings from the environment: every variable named `spark.*` (env allows dots:
    `env spark.executor.memory=4g ...`), then `SPARK_CONF="spark.a=1;spark.b=2"`, which wins."""
    environ = os.environ if environ is None else environ
    conf = {k: v for k, v in environ.items() if k.startswith("spark.")}
    for item in filter(None, (part.strip() for part in environ.get("SPARK_CONF", "").split(";"))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key.startswith("spark.") or len(key) <= len("spark."):
            raise ImproperlyConfigured(f"SPARK_CONF entry {item!r} is not spark.<name>=<value>")
        conf[key] = value.strip()
    return conf
