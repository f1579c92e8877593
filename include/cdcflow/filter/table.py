"""TiDB's table-filter syntax, as TiCDC applies it to `[filter] rules`.

A rule is `schema-pattern.table-pattern`, optionally prefixed with `!` to
exclude.  Each pattern is a wildcard (`*`, `?`, `[a-z]`, `[!a-z]`, `\\`
escapes), a quoted literal (`` `a.b` `` or `"a.b"`, the quote doubled inside)
or a `/regex/` searched anywhere in the name.  The last rule that matches
decides; a name no rule matches is excluded.  Blank lines and `#` comments are
skipped.

The rule grammar and its wildcards are parsed here by hand: they are TiDB's own
(fnmatch has no `\\` escapes, quoted names or schema.table split) and no
library implements them.  A `/regex/` is compiled by RE2 itself (google-re2),
the syntax TiCDC evaluates it with through Go's regexp, so `\\p{Han}` or
`\\Q...\\E` work as in TiCDC and a rule TiCDC would refuse (a lookahead, a
backreference) is refused here too rather than silently working.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from functools import partial
from typing import Callable

import re2

from cdcflow.core.errors import ConfigError
from cdcflow.core.system_schemas import is_system_schema

_HINT = ("write each rule as schema-pattern.table-pattern, e.g. 'test.t*', '!test.tmp_*', "
         "'`my.db`.*' or '/^log_\\d+$/.*' (see TiDB's Table Filter syntax)")

_REGEX_PART = re.compile(r"/(?:\\.|[^/])+/")
_QUOTED_PART = {'"': re.compile(r'"(?:""|[^"])+"'), "`": re.compile(r"`(?:``|[^`])+`")}
_CHAR_CLASS = re.compile(r"\[!?(?:\\[^0-9a-zA-Z]|[^\\\]])+\]")

# Constructs Python's `re` has and RE2 refuses, named after the fragment RE2's error
# quotes, so the message says what the user wrote rather than RE2's parser term.
_NOT_IN_RE2 = {"(?=": "lookahead", "(?!": "negative lookahead", "(?<=": "lookbehind",
               "(?<!": "negative lookbehind", "(?>": "atomic group", "(?(": "conditional group",
               "(?P": "named backreference", "(?#": "comment group", "*+": "possessive quantifier",
               "++": "possessive quantifier", "?+": "possessive quantifier"}


@dataclass(frozen=True, slots=True)
class _Pattern:
    match: Callable[[str], object]  # truthy when the name matches
    matches_all: bool = False  # only the bare `*`: decides whether `!db.*` drops the schema


@dataclass(frozen=True, slots=True)
class _Rule:
    positive: bool
    schema: _Pattern
    table: _Pattern


_ALL = _Pattern(match=lambda _name: True, matches_all=True)


class _RuleError(Exception):  # what is wrong with one rule; becomes a ConfigError naming it
    pass


def _compile(regex: str, flags: int, shown: str) -> re.Pattern:
    try:
        return re.compile(regex, flags)
    except re.error as e:
        raise _RuleError(f"invalid pattern {shown}: {e}") from None


def _class_char(c: str) -> str:
    # RE2 and wildcards read these literally in a class; Python may see nested sets or set operations.
    return "\\" + c if c in "[&~|" else c


def _compile_regex(src: str, case_sensitive: bool) -> Callable[[str], object]:
    """A user /regex/ compiled by RE2, the engine (through Go's regexp) TiCDC evaluates it with."""
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.log_errors = False  # the error becomes the rule's ConfigError, not a line on stderr
    try:
        return re2.compile(src, options).search
    except re2.error as e:
        reason = e.args[0]
        raise _refused(src, reason.decode() if isinstance(reason, bytes) else str(reason)) from None


def _refused(src: str, reason: str) -> _RuleError:
    """RE2's reason for refusing /src/, naming the Python-only construct when it is one."""
    fragment = reason.rpartition(": ")[2]  # RE2 quotes the offending part last
    what = _NOT_IN_RE2.get(fragment)
    if what is None and reason.startswith("invalid escape") and fragment[1:2] in tuple("123456789"):
        what = "backreference"
    if what is None:
        return _RuleError(f"invalid pattern /{src}/: {reason}")
    return _RuleError(f"/{src}/ uses a {what} ({reason}), which TiCDC's regex engine (RE2) does not support")


def _char_class(body: str) -> str:
    """Translate the inside of a wildcard `[...]` (without the brackets) to a regex class."""
    head = {"!": "[^", "^": "[\\^"}.get(body[0], "[")  # a leading '^' is a plain character here
    body = body[1:] if head != "[" else body
    if not body and head == "[^":
        raise _RuleError("empty character class '[!]'")
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\":
            esc = body[i + 1]
            out.append("\\" + esc if esc.isascii() else esc)
            i += 2
        else:
            out.append(_class_char(body[i]))
            i += 1
    return head + "".join(out) + "]"


def _parse_wildcard(text: str, flags: int, case_sensitive: bool) -> tuple[_Pattern, str]:
    literal, regex, is_literal, i = [], [], True, 0
    while i < len(text) and text[i] != ".":  # an unescaped '.' separates schema from table
        c = text[i]
        if c == "\\":
            if i + 1 == len(text):
                raise _RuleError("a '\\' cannot end the rule; escape it as '\\\\'")
            esc = text[i + 1]
            if esc.isascii() and esc.isalnum():
                raise _RuleError(f"cannot escape a letter or digit ('\\{esc}'); write it without the backslash")
            literal.append(esc)
            regex.append(re.escape(esc))
            i += 2
        elif c in "*?":
            is_literal = False
            regex.append(".*" if c == "*" else ".")
            i += 1
        elif c == "[":
            is_literal = False
            m = _CHAR_CLASS.match(text, i)
            if not m:
                raise _RuleError(f"unbalanced or empty character class starting at {text[i:]!r}")
            regex.append(_char_class(m.group()[1:-1]))
            i = m.end()
        elif c in "$_" or (c.isascii() and c.isalnum()) or ord(c) >= 0x80:  # identifier characters
            literal.append(c)
            regex.append(re.escape(c))
            i += 1
        else:
            raise _RuleError(f"unexpected special character {c!r}; "
                             "quote the name with backticks or escape it with '\\'")
    if i == 0:
        raise _RuleError("empty schema or table pattern")
    if is_literal:
        return _literal("".join(literal), case_sensitive), text[i:]
    if regex == [".*"]:
        return _ALL, text[i:]
    return _Pattern(match=_compile("".join(regex), flags | re.DOTALL, repr(text[:i])).fullmatch), text[i:]


def _literal(name: str, case_sensitive: bool) -> _Pattern:
    return _Pattern(match=partial(operator.eq, name if case_sensitive else name.lower()))


def _parse_pattern(text: str, flags: int, case_sensitive: bool) -> tuple[_Pattern, str]:
    """Parse one pattern at the start of text; return it and what follows."""
    if not text:
        raise _RuleError("missing pattern (empty schema or table part)")
    if text[0] == "/":
        m = _REGEX_PART.match(text)
        if not m:
            raise _RuleError("unterminated or empty /regex/")
        return _Pattern(match=_compile_regex(m.group()[1:-1], case_sensitive)), text[m.end():]
    if (q := text[0]) in _QUOTED_PART:
        m = _QUOTED_PART[q].match(text)
        if not m:
            raise _RuleError(f"unterminated or empty quoted name {q}...{q}")
        return _literal(m.group()[1:-1].replace(q + q, q), case_sensitive), text[m.end():]
    return _parse_wildcard(text, flags, case_sensitive)


def _parse_rule(rule: str, case_sensitive: bool) -> _Rule | None:
    line = rule.strip(" \t")
    if not line or line.startswith("#"):
        return None
    if line.startswith("@"):
        raise _RuleError("importing rules from a file ('@file') is not supported; list the rules inline")
    positive = not line.startswith("!")
    line = line if positive else line[1:]
    flags = 0 if case_sensitive else re.IGNORECASE
    schema, rest = _parse_pattern(line, flags, case_sensitive)
    if not rest:
        raise _RuleError("missing '.' and table pattern (write schema.table, e.g. 'db.*')")
    if rest[0] != ".":
        raise _RuleError("missing '.' between schema and table patterns")
    table, rest = _parse_pattern(rest[1:], flags, case_sensitive)
    if rest:
        raise _RuleError(f"unexpected characters {rest!r} after the table pattern")
    return _Rule(positive=positive, schema=schema, table=table)


class TableFilter:
    """Decides which upstream tables (and schemas) a changefeed replicates."""

    def __init__(self, rules: list[str] | None = None, case_sensitive: bool = False, key: str = "filter.rules"):
        """`key` names the rules in errors (the config key they were read from)."""
        if isinstance(rules, str) or not isinstance(rules, (list, tuple, type(None))):
            raise ConfigError(f"{key} must be a list of strings, got {type(rules).__name__} {rules!r}",
                              hint="write rules = ['db.*'] with brackets")
        self._rules = list(rules) if rules else ["*.*"]
        self._case_sensitive = case_sensitive
        compiled = []
        for n, rule in enumerate(self._rules):
            if not isinstance(rule, str):
                raise ConfigError(f"{key}[{n}] must be a string, got {type(rule).__name__} {rule!r}",
                                  hint=_HINT)
            try:
                parsed = _parse_rule(rule, case_sensitive)
            except _RuleError as e:
                raise ConfigError(f"{key}[{n}] {rule!r} is invalid: {e}", hint=_HINT) from None
            if parsed is not None:
                compiled.append(parsed)
        self._compiled = tuple(reversed(compiled))  # so the first hit is the last matching rule

    @property
    def rules(self) -> list[str]:
        """The rules in effect, as written (['*.*'] when none were given)."""
        return list(self._rules)

    def match_table(self, schema: str, table: str) -> bool:
        if is_system_schema(schema):
            return False
        if not self._case_sensitive:
            schema, table = schema.lower(), table.lower()
        for rule in self._compiled:
            if rule.schema.match(schema) and rule.table.match(table):
                return rule.positive
        return False

    def match_schema(self, schema: str) -> bool:
        """True when some table of the schema could be selected (TiDB's MatchSchema).

        Any positive rule whose schema pattern matches selects the schema; a
        negative rule only rejects it when its table pattern is the bare `*`,
        since `!db.t1` still leaves db's other tables selected.
        """
        if is_system_schema(schema):
            return False
        schema = schema if self._case_sensitive else schema.lower()
        for rule in self._compiled:
            if rule.schema.match(schema) and (rule.positive or rule.table.matches_all):
                return rule.positive
        return False

    def __repr__(self) -> str:
        return f"TableFilter({self._rules!r}, case_sensitive={self._case_sensitive})"
