"""Query parameters and URL names, read the way kube-apiserver reads them.

apimachinery decodes a request's query into ``ListOptions`` (``runtime.Convert_Slice_string_To_*``): an
integer goes through ``strconv.ParseInt(s, 10, 64)``, and a parameter that does not parse fails the whole
request with ``400 BadRequest`` and Go's own error text (``strconv.ParseInt: parsing "abc": invalid
syntax``). The parameter is not ignored and does not default. A boolean never fails: only ``0`` and
``false`` (any case) are false, and anything else, the empty string included, is true.

A name in the URL reaches storage only through the registry's key functions, which refuse the path
segments ``.`` and ``..`` and names containing ``/`` or ``%`` (``path.IsValidPathSegmentName``). Without
that check ``configmaps/..`` could climb out of its resource.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

__all__ = ["INT64_MAX", "ParamError", "go_quote", "parse_int64", "path_segment_errors", "query_bool", "query_int64"]

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
_INT = re.compile(r"[+-]?[0-9]+")


class ParamError(ValueError):
    """A query parameter that does not parse; the message is Go's."""


def go_quote(text: str) -> str:
    """Close to Go's ``%q`` / ``strconv.Quote``: double quotes, backslash escapes, printable text kept."""
    return json.dumps(text, ensure_ascii=False)


def parse_int64(text: str) -> int:
    """``strconv.ParseInt(text, 10, 64)``: a sign and decimal digits only; no spaces, no underscores."""
    if not _INT.fullmatch(text):
        raise ParamError(f"strconv.ParseInt: parsing {go_quote(text)}: invalid syntax")
    digits = text.lstrip("+-").lstrip("0")
    if len(digits) > 19 or not INT64_MIN <= int(text) <= INT64_MAX:
        raise ParamError(f"strconv.ParseInt: parsing {go_quote(text)}: value out of range")
    return int(text)


def query_int64(query: Mapping[str, str], name: str) -> int | None:
    """An ``int64`` parameter (``limit``, ``timeoutSeconds``); None when absent. Only the first value counts."""
    raw = query.get(name)
    return None if raw is None else parse_int64(raw)


def query_bool(query: Mapping[str, str], name: str) -> bool:
    """``Convert_Slice_string_To_bool``: absent, ``0`` and ``false`` are false; ``?watch`` alone is true."""
    raw = query.get(name)
    return raw is not None and raw != "0" and raw.lower() != "false"


def path_segment_errors(name: str) -> list[str]:
    """``path.IsValidPathSegmentName``: the reasons a name cannot be a path segment (empty when it can)."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]
