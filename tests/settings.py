"""Settings for the test run: the console's own, with a SECRET_KEY for tests only.

Without DEBUG the console refuses to start without SECRET_KEY (tests/console/test_settings.py
checks that); the processes the tests start (daphne, engines) inherit this one."""
import os

os.environ.setdefault("SECRET_KEY", "tests-only-secret-key-not-for-any-deployment")

from console.settings import *  # noqa: E402,F401,F403

# Tests of other features see every change at once: the fleet-scale caches are off, and the
# cache tests (tests/console/kafka_gateway/test_cache.py) turn them on with override_settings.
KAFKA_METADATA_MAX_AGE_SECONDS = 0.0
LOG_DIR_SIZES_MAX_AGE_SECONDS = 0.0
GROUP_LAG_MAX_AGE_SECONDS = 0.0
TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS = 0.0
CLUSTER_HEALTH_MAX_AGE_SECONDS = 0.0
METRICS_MAX_AGE_SECONDS = 0.0
