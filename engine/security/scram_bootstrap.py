"""`serve --add-scram 'SCRAM-SHA-256=[name=alice,password=alice-secret]'`: the first SCRAM users.

A listener that enables only SCRAM needs a user before anyone can log in to add users with
AlterUserScramCredentials; Kafka seeds them with `kafka-storage format --add-scram`, whose
syntax this takes (`iterations=` too). A credential is added only if that user has none
for that mechanism yet, so a restart with the same flags changes nothing, and a password
changed since with AlterUserScramCredentials stays changed. The password is on the command
line, as with Kafka's tool: visible in `ps` to other local users while the engine starts;
`--add-scram-file FILE` takes the same lines from a file instead.
"""
from __future__ import annotations

import re
import secrets
from pathlib import Path

from engine.config import InvalidConfigError
from engine.security import scram

_ENTRY = re.compile(r"^(SCRAM-SHA-256|SCRAM-SHA-512)=\[(.*)\]$")


def parse(value: str) -> tuple[str, str, str, int]:
    """(mechanism, name, password, iterations); errors never repeat the value (it holds a password)."""
    match = _ENTRY.match(value.strip())
    if not match:
        raise InvalidConfigError("--add-scram expects SCRAM-SHA-256=[name=NAME,password=PASSWORD] "
                                 "(or SCRAM-SHA-512, and optionally iterations=N)")
    fields = {}
    for item in match.group(2).split(","):
        key, sep, raw = item.partition("=")
        fields[key.strip()] = raw.strip().strip('"') if sep else None
    name, password = fields.get("name"), fields.get("password")
    if not name or not password or set(fields) - {"name", "password", "iterations"}:
        raise InvalidConfigError("--add-scram needs name= and password= (and at most iterations=), nothing else")
    try:
        iterations = int(fields.get("iterations") or scram.DEFAULT_ITERATIONS)
    except ValueError:
        raise InvalidConfigError("--add-scram: iterations must be a number") from None
    return match.group(1), name, password, iterations


def parse_file(path: str) -> list[tuple[str, str, str, int]]:
    """`--add-scram-file FILE`: one --add-scram value a line (`#` comments), so the passwords
    stay in a file (keep it mode 0600) instead of the command line. Errors name the line, never
    its content."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InvalidConfigError(f"cannot read the SCRAM users file {path}: {exc.strerror}") from None
    entries = []
    for number, line in enumerate(lines, 1):
        if line.strip() and not line.strip().startswith("#"):
            try:
                entries.append(parse(line))
            except InvalidConfigError as exc:
                raise InvalidConfigError(f"{path}, line {number}: {exc}") from None
    return entries


def add_missing(controller, entries: list[tuple[str, str, str, int]]) -> list[str]:
    """Add each credential its user does not have yet; returns "name (mechanism)" of those added."""
    added = []
    for mechanism, name, password, iterations in entries:
        if controller.scram_credential(name, mechanism) is not None:
            continue
        salt = secrets.token_bytes(32)
        salted = scram.salted_password(mechanism, password, salt, iterations)
        [(_, error)] = controller.alter_user_scram_credentials(
            [], [(name, scram.MECHANISM_IDS[mechanism], iterations, salt, salted)])
        if error is not None:
            raise InvalidConfigError(f"--add-scram for {name!r} ({mechanism}): {error.message}")
        added.append(f"{name} ({mechanism})")
    return added
