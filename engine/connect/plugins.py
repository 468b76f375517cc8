"""Connector plugins: the built-in FileStream connectors and converters, and the Python
connectors found on the worker's `plugin.path`.

Each entry of `plugin.path` is a directory (every `*.py` module and every package directly in
it is imported) or a single `.py` file. A plugin is known by its full name (Kafka's class
name for the built-ins, `module.Class` for Python plugins) or by an alias: the class name, or
the class name without its `Connector` suffix, when only one plugin has it (Connect's rule).
A module that fails to import is logged and skipped: the worker serves the others.
"""
from __future__ import annotations

import importlib
import inspect
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

from engine.connect import converters, file_stream
from engine.connect.api import Connector, SinkConnector, SourceConnector

log = logging.getLogger("engine.connect.plugins")

BUILT_IN = {
    "org.apache.kafka.connect.file.FileStreamSourceConnector": file_stream.FileStreamSourceConnector,
    "org.apache.kafka.connect.file.FileStreamSinkConnector": file_stream.FileStreamSinkConnector,
}


class PluginNotFound(LookupError):
    """No plugin (or more than one) answers to a name; the message is Connect's."""


@dataclass(frozen=True)
class PluginDesc:
    name: str
    cls: type
    type: str          # "source", "sink" or "converter"

    def info(self) -> dict:
        version = "3.9.0" if self.type == "converter" else _version(self.cls)
        return {"class": self.name, "type": self.type, "version": version}


def _version(cls: type) -> str:
    try:
        return str(cls().version())
    except Exception:      # a plugin whose constructor or version() fails still lists
        return "undefined"


def _kind(cls: type) -> str:
    return "source" if issubclass(cls, SourceConnector) else "sink"


class Plugins:
    def __init__(self, plugin_path: list[str] | None = None) -> None:
        self.connectors: dict[str, PluginDesc] = {name: PluginDesc(name, cls, _kind(cls))
                                                  for name, cls in BUILT_IN.items()}
        self.converters = {name: PluginDesc(name, cls, "converter") for name, cls in converters.CONVERTERS.items()}
        for entry in plugin_path or []:
            if entry.strip():
                self._scan(Path(entry.strip()))

    def _scan(self, path: Path) -> None:
        if path.is_file() and path.suffix == ".py":
            self._load(path.parent, path.stem)
            return
        if not path.is_dir():
            log.warning("Plugin path %s is neither a directory nor a .py file; skipped", path)
            return
        for child in sorted(path.iterdir()):
            if child.suffix == ".py" and not child.name.startswith("_"):
                self._load(path, child.stem)
            elif child.is_dir() and (child / "__init__.py").exists():
                self._load(path, child.name)

    def _load(self, directory: Path, module_name: str) -> None:
        if str(directory) not in sys.path:
            sys.path.insert(0, str(directory))
        try:
            module = importlib.import_module(module_name)
        except Exception:
            log.exception("Could not load plugin module %s from %s; skipped", module_name, directory)
            return
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (issubclass(cls, (SourceConnector, SinkConnector)) and cls not in (SourceConnector, SinkConnector)
                    and cls.__module__.split(".")[0] == module_name):
                name = f"{cls.__module__}.{cls.__qualname__}"
                self.connectors[name] = PluginDesc(name, cls, _kind(cls))
                log.info("Loaded plugin %s (%s) from %s", name, _kind(cls), directory)

    def connector_plugins(self) -> list[PluginDesc]:
        return sorted(self.connectors.values(), key=lambda p: (p.type != "sink", p.name))

    def all_plugins(self) -> list[PluginDesc]:
        return self.connector_plugins() + sorted(self.converters.values(), key=lambda p: p.name)

    def connector(self, name: str) -> PluginDesc:
        """By full name or alias; PluginNotFound with Connect's message otherwise."""
        name = (name or "").strip()
        if name in self.connectors:
            return self.connectors[name]
        matches = [p for p in self.connectors.values() if p.cls.__name__ in (name, name + "Connector")]
        available = ", ".join(self._describe(p) for p in self.connector_plugins())
        if not matches:
            raise PluginNotFound(f"Failed to find any class that implements Connector and which name matches "
                                 f"{name}, available connectors are: {available}")
        if len(matches) > 1:
            raise PluginNotFound(f"More than one connector matches alias {name}. Please use full package and class "
                                 f"name instead. Classes found: {available}")
        return matches[0]

    def plugin(self, name: str) -> PluginDesc:
        """A connector or converter, for `/connector-plugins/{p}/config`."""
        cls = converters.converter_class(name)
        if cls is not None:
            return next(p for p in self.converters.values() if p.cls is cls)
        return self.connector(name)

    @staticmethod
    def _describe(plugin: PluginDesc) -> str:
        return f"PluginDesc{{klass={plugin.name}, name='{plugin.name}', version='{_version(plugin.cls)}', " \
               f"type={plugin.type}}}"

    def new_connector(self, name: str) -> Connector:
        return self.connector(name).cls()
