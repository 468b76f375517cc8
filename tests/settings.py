"""Settings for the test run: the console's own, with a SECRET_KEY for tests only.

Without DEBUG the console refuses to start without SECRET_KEY (tests/console/test_settings.py
checks that); the processes the tests start (daphne, engines) inherit this one."""
import os

os.environ.setdefault("SECRET_KEY", "tests-only-secret-key-not-for-any-deployment")

from console.settings import *  # noqa: E402,F401,F403
