"""The principal of a TLS client certificate: its subject, mapped by `ssl.principal.mapping.rules`.

As Kafka's DefaultKafkaPrincipalBuilder and SslPrincipalMapper: the subject is written as
RFC 2253 does (`CN=alice,OU=eng,O=Acme,C=US`, most specific first), then the rules are tried
in order, and the first that applies names the user:
  DEFAULT                          the whole subject
  RULE:pattern/replacement/[L|U]   if the pattern matches the whole subject, the replacement
                                   with $1.. for its groups, lower- or upper-cased with L or U
e.g. `RULE:^CN=([^,]+),OU=clients.*$/$1/L,DEFAULT`. No rule applying closes the connection,
as Kafka fails the login. Patterns are Java-style regexes; Python's `re` runs them (they come
from the broker's own configuration, not from clients).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from cryptography import x509

from engine.config import InvalidConfigError

_RULE = r"(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*(?:,\s*|$)")
_PARSER = re.compile(_RULE)
_BACK_REFERENCE = re.compile(r"\$(\d+)")


class NoMatchingRule(Exception):
    """No mapping rule applies to the subject: the connection is refused."""


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern | None        # None: DEFAULT
    replacement: str = ""
    case: str = ""

    def apply(self, subject: str) -> str | None:
        if self.pattern is None:
            return subject
        match = self.pattern.fullmatch(subject)
        if match is None:
            return None
        groups = match.re.groups

        def expand(ref: re.Match) -> str:
            digits = number = ref.group(1)
            while int(number) > groups and len(number) > 1:     # $12 with one group: $1, then "2"
                number = number[:-1]
            if int(number) > groups:
                return ref.group(0)                              # no such group: a literal, as in Kafka
            return (match.group(int(number)) or "") + digits[len(number):]
        result = _BACK_REFERENCE.sub(expand, self.replacement)
        return result.lower() if self.case == "L" else result.upper() if self.case == "U" else result


class PrincipalMapper:
    def __init__(self, rules: str = "DEFAULT") -> None:
        self._rules = _parse(rules)

    def name(self, subject: str) -> str:
        for rule in self._rules:
            mapped = rule.apply(subject)
            if mapped is not None:
                return mapped
        raise NoMatchingRule(f"No rules apply to {subject}")


def _parse(rules: str) -> list[_Rule]:
    parsed = []
    for match in _SPLITTER.finditer(rules.strip()):
        text = match.group(1)
        if not text:
            continue
        rule = _PARSER.match(text)
        if rule is None or rule.end() != len(text) or rule.group(5):
            raise InvalidConfigError(f"ssl.principal.mapping.rules: invalid rule `{text}`")
        if rule.group(1):
            parsed.append(_Rule(None))
        else:
            try:
                pattern = re.compile(rule.group(2))
            except re.error as exc:
                raise InvalidConfigError(f"ssl.principal.mapping.rules: bad pattern in `{text}`: {exc}") from None
            parsed.append(_Rule(pattern, rule.group(3), rule.group(4)))
    return parsed


def subject_of(certificate_der: bytes) -> str:
    """The certificate's subject in RFC 2253 form (as Java's X500Principal.getName())."""
    return x509.load_der_x509_certificate(certificate_der).subject.rfc4514_string()
