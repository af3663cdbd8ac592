"""Query parameters and URL names, read the way kube-apiserver reads them.

apimachinery decodes a request's query into ``ListOptions`` (``runtime.Convert_Slice_string_To_*``): an
integer goes through ``strconv.ParseInt(s, 10, 64)``, and a parameter that does not parse fails the whole
request with ``400 BadRequest`` and Go's own error text (``strconv.ParseInt: parsing "abc": invalid
syntax``). The parameter is not ignored and does not default. A boolean never fails: only ``0`` and
``false`` (any case) are false, and anything else, the empty string included, is true.

A name in the URL reaches storage only through the registry's key functions, which refuse the path
segments ``.`` and ``..`` and names containing ``/`` or ``%`` (``path.IsValidPathSegmentName``). Without
that check ``configmaps/..`` could climb out of its resource.

``list_options`` reads a list or watch request's ``ListOptions`` as the handler does (``listOpts``): decoded,
then defaulted (``SetListOptionsDefaults`` with the WatchList feature on, as it is from 1.34: a watch from
``""`` or ``"0"`` without ``sendInitialEvents`` or ``resourceVersionMatch`` becomes a streaming list,
``sendInitialEvents=true&resourceVersionMatch=NotOlderThan``), then validated (``ValidateListOptions``).
A combination upstream refuses is a ``422 Invalid`` on ``ListOptions.meta.k8s.io`` with the same causes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["INT64_MAX", "ListOptions", "ParamError", "go_quote", "list_options", "parse_int64", "path_segment_errors",
           "query_bool", "query_int64", "validate_list_options"]

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


# field.Error causes: (field, reason, message) as the 422 carries them.
Cause = tuple[str, str, str]
EXACT, NOT_OLDER_THAN = "Exact", "NotOlderThan"


@dataclass(frozen=True, slots=True)
class ListOptions:
    """``metainternalversion.ListOptions``, the parts a list or watch reads. ``send_initial_events`` is
    Go's ``*bool``: None when the parameter is absent (``?sendInitialEvents=`` is present, and true)."""
    watch: bool = False
    resource_version: str = ""
    resource_version_match: str = ""
    send_initial_events: bool | None = None
    allow_watch_bookmarks: bool = False
    continue_token: str = ""
    limit: int = 0
    timeout_seconds: int | None = None

    @property
    def watch_list(self) -> bool:
        """``isListWatchRequest``: a streaming list, whose initial events end with an annotated bookmark."""
        return bool(self.send_initial_events) and self.allow_watch_bookmarks


def list_options(query: Mapping[str, str], watch: bool) -> ListOptions:
    """Decode and default a list or watch request's ``ListOptions``; ParamError for a value that does not parse
    (a 400), validation is ``validate_list_options``'s."""
    raw_send = query.get("sendInitialEvents")
    send = None if raw_send is None else query_bool(query, "sendInitialEvents")
    rv = query.get("resourceVersion") or ""
    match = query.get("resourceVersionMatch") or ""
    # SetListOptionsDefaults: WatchList is on by default since 1.34, so a legacy watch (from "" or "0")
    # is a streaming list; with bookmarks allowed its initial events end with the annotated bookmark.
    if watch and send is None and not match and rv in ("", "0"):
        send, match = True, NOT_OLDER_THAN
    return ListOptions(watch=watch, resource_version=rv, resource_version_match=match, send_initial_events=send,
                       allow_watch_bookmarks=query_bool(query, "allowWatchBookmarks"),
                       continue_token=query.get("continue") or "", limit=query_int64(query, "limit") or 0,
                       timeout_seconds=query_int64(query, "timeoutSeconds"))


def _not_supported(field: str, value: str, supported: tuple[str, ...]) -> Cause:
    return (field, "FieldValueNotSupported", f"Unsupported value: {go_quote(value)}: supported values: "
                                             + ", ".join(go_quote(v) for v in supported))


def validate_list_options(opts: ListOptions) -> list[Cause]:
    """apimachinery's ``ValidateListOptions`` (WatchList enabled), cause for cause and in its order."""
    causes: list[Cause] = []
    match = opts.resource_version_match
    forbidden = "FieldValueForbidden"
    if opts.watch:
        if opts.send_initial_events is not None and match != NOT_OLDER_THAN:
            causes.append(("resourceVersionMatch", forbidden,
                           f"Forbidden: sendInitialEvents requires setting resourceVersionMatch to {NOT_OLDER_THAN}"))
        if match:
            if opts.send_initial_events is None:
                causes.append(("resourceVersionMatch", forbidden, "Forbidden: resourceVersionMatch is forbidden for "
                                                                  "watch unless sendInitialEvents is provided"))
            if match != NOT_OLDER_THAN:
                causes.append(_not_supported("resourceVersionMatch", match, (NOT_OLDER_THAN,)))
            if opts.continue_token:
                causes.append(("resourceVersionMatch", forbidden,
                               "Forbidden: resourceVersionMatch is forbidden when continue is provided"))
        return causes
    if match:
        if not opts.resource_version:
            causes.append(("resourceVersionMatch", forbidden,
                           "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if opts.continue_token:
            causes.append(("resourceVersionMatch", forbidden,
                           "Forbidden: resourceVersionMatch is forbidden when continue is provided"))
        if match not in (EXACT, NOT_OLDER_THAN):
            causes.append(_not_supported("resourceVersionMatch", match, (EXACT, NOT_OLDER_THAN, "")))
        if match == EXACT and opts.resource_version == "0":
            causes.append(("resourceVersionMatch", forbidden,
                           'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if opts.send_initial_events is not None:
        causes.append(("sendInitialEvents", forbidden, "Forbidden: sendInitialEvents is forbidden for list"))
    return causes
