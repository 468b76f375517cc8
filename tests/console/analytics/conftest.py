from tests.support.spark import spark  # noqa: F401 - the session-wide Spark fixture
