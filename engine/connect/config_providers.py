"""Config providers (KIP-297, KIP-887, KIP-993): `${provider:path:key}` in a connector's or the
worker's config is replaced with a value kept elsewhere, so secrets stay out of the config topic,
the REST API and the console.

The worker names its providers as Connect does:

    config.providers=file,dir,env
    config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
    config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
    config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
    config.providers.file.param.allowed.paths=/etc/connect/secrets

- FileConfigProvider: `${file:/path/creds.properties:password}` is the key `password` of that
  properties file;
- DirectoryConfigProvider: `${dir:/path/secrets:password}` is the content of the file `password`
  in that directory (Kubernetes secrets mounted as files);
- EnvVarConfigProvider: `${env:DB_PASSWORD}` (or `${env::DB_PASSWORD}`) is that environment
  variable; `env.var.names` (param) lists the ones it may read (KIP-887's allow-list; empty:
  all).
`allowed.paths` (param; KIP-993) lists the directories the file and directory providers may read
below; a path elsewhere is an error. As in Connect, a variable whose provider is not configured,
or whose key the provider does not have, is left as it is; a provider that cannot read its
file fails the connector or task with the reason.

Where they apply (Connect's WorkerConfigTransformer): a connector is started with its config
transformed and its task configs are stored with the connector's variables put back in place of
the values they gave (Connect's reverse transform), so the config topic never holds a secret; a
task is started with its config transformed. The REST API and the console see the variables.
The worker's own properties are transformed when it starts.
Gaps: no custom provider classes, no TTLs (a changed secret is read at the next restart of the
connector or task).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from engine.connect import properties

FILE = "org.apache.kafka.common.config.provider.FileConfigProvider"
DIRECTORY = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
ENV = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
# Connect's ConfigTransformer.DEFAULT_PATTERN: ${provider:[path:]key}
VARIABLE = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")


class ConfigProviderError(ValueError):
    """A provider that cannot give what a variable asks: the sentence names the file, never a value."""


class _Provider:
    def __init__(self, params: dict[str, str]) -> None:
        self._allowed = [Path(p.strip()).resolve() for p in params.get("allowed.paths", "").split(",") if p.strip()]

    def _checked(self, path: str) -> Path:
        resolved = Path(path).resolve()
        if self._allowed and not any(resolved.is_relative_to(allowed) for allowed in self._allowed):
            raise ConfigProviderError(f"{path} is not allowed: it is not below allowed.paths")
        return resolved

    def get(self, path: str, key: str) -> str | None:
        raise NotImplementedError


class FileProvider(_Provider):
    def get(self, path: str, key: str) -> str | None:
        try:
            return properties.load(self._checked(path)).get(key)
        except OSError as exc:
            raise ConfigProviderError(f"Could not read properties from file {path}: "
                                      f"{exc.strerror or type(exc).__name__}") from None


class DirectoryProvider(_Provider):
    def get(self, path: str, key: str) -> str | None:
        directory = self._checked(path)
        candidate = (directory / key).resolve()
        if candidate.parent != directory or not candidate.is_file():
            return None
        try:
            return candidate.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigProviderError(f"Could not read the file {key} in {path}: "
                                      f"{exc.strerror or type(exc).__name__}") from None


class EnvProvider(_Provider):
    def __init__(self, params: dict[str, str]) -> None:
        super().__init__(params)
        names = params.get("env.var.names", "")
        self._names = {n.strip() for n in names.split(",") if n.strip()} or None

    def get(self, path: str, key: str) -> str | None:
        if path:
            raise ConfigProviderError("the environment variable provider takes no path")
        if self._names is not None and key not in self._names:
            return None
        return os.environ.get(key)


_CLASSES = {FILE: FileProvider, DIRECTORY: DirectoryProvider, ENV: EnvProvider}


class ConfigProviders:
    """The providers a worker's properties name (`config.providers...`)."""

    def __init__(self, worker_props: dict[str, str]) -> None:
        self._providers: dict[str, _Provider] = {}
        for name in (n.strip() for n in worker_props.get("config.providers", "").split(",") if n.strip()):
            class_name = worker_props.get(f"config.providers.{name}.class", "")
            if class_name not in _CLASSES:
                raise ConfigProviderError(f"config.providers.{name}.class: {class_name or 'missing'} is not one of "
                                          f"{', '.join(sorted(_CLASSES))}")
            prefix = f"config.providers.{name}.param."
            params = {k[len(prefix):]: v for k, v in worker_props.items() if k.startswith(prefix)}
            self._providers[name] = _CLASSES[class_name](params)

    def __bool__(self) -> bool:
        return bool(self._providers)

    def transform(self, config: dict[str, str]) -> dict[str, str]:
        """`config` with every variable of a configured provider replaced by its value."""
        if not self._providers:
            return dict(config)
        return {key: self._substitute(value) if isinstance(value, str) and "${" in value else value
                for key, value in config.items()}

    def _substitute(self, value: str) -> str:
        def replace(match: re.Match) -> str:
            provider = self._providers.get(match.group(1))
            if provider is None:
                return match.group(0)
            found = provider.get(match.group(3) or "", match.group(4))
            return match.group(0) if found is None else found
        return VARIABLE.sub(replace, value)

    def reverse(self, raw: dict[str, str], task_configs: list[dict[str, str]]) -> list[dict[str, str]]:
        """Task configs with the connector's variables put back where they hold the value a
        variable gave (Connect's reverseTransform), so none is stored resolved."""
        variables = {key: value for key, value in raw.items() if isinstance(value, str) and VARIABLE.search(value)}
        if not variables:
            return task_configs
        resolved = self.transform(variables)
        return [{key: variables[key] if key in variables and value == resolved[key] else value
                 for key, value in config.items()} for config in task_configs]
