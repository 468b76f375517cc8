"""A registry on the shared engine (its own store topic and group), and a cluster row using it."""
from __future__ import annotations

import pytest

from console.schema_registry.models import RegistrySettings
from tests.support.registry_process import RegistryProcess


@pytest.fixture(scope="session")
def console_registry(engine_cluster, tmp_path_factory):
    process = RegistryProcess(engine_cluster.bootstrap, tmp_path_factory.mktemp("console-registry"),
                              ["--topic", "_schemas_console_tests", "--group-id", "sr-console-tests"]).start()
    yield process
    process.kill()


@pytest.fixture
def registry_cluster(cluster, console_registry):
    RegistrySettings.objects.create(cluster=cluster, url=console_registry.url)
    return cluster
