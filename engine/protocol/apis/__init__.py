"""One module per Kafka API, named by its key: `kNN_<api name>.py` (`k00_produce.py` ...).

Importing this package imports every such module, found on disk, so each registers its
handler with `@api` (engine/protocol/registry.py): a new handler needs its module and
nothing else. Two modules registering the same key fail loudly at import (registry.api).
"""
import importlib
import pkgutil
import re

HANDLER_MODULE = re.compile(r"k\d{2}_\w+")


def handler_modules() -> list[str]:
    """The handler modules' names, in key order."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if HANDLER_MODULE.fullmatch(m.name))


for _name in handler_modules():
    importlib.import_module(f"{__name__}.{_name}")
