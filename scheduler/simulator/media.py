"""Request media types, as kube-apiserver's ``NegotiateInputSerializer`` accepts them.

The rule is to advertise only what is served. Request bodies are JSON, YAML, and protobuf for the built-in
kinds whose encoding ``protobuf.py`` knows; the 415 for any other body lists exactly those (custom
resources, as upstream, take no protobuf). Responses are JSON, or YAML when the ``Accept`` header
prefers it (a watch is JSON only): ``negotiate_output`` tries the clauses by ``q`` as goautoneg does,
skips what this server cannot encode (protobuf: client-go's typed clients send
``application/vnd.kubernetes.protobuf,application/json`` and get JSON), and answers 406 when nothing
is left, as ``NegotiateOutputMediaType`` does.
"""

from __future__ import annotations

import functools

from scheduler.simulator.apierrors import ApiError

__all__ = ["JSON", "PROTOBUF", "YAML", "negotiate_output", "unsupported_media_type"]

JSON, YAML, PROTOBUF = "application/json", "application/yaml", "application/vnd.kubernetes.protobuf"


def unsupported_media_type(accepted: tuple[str, ...] | list[str]) -> ApiError:
    """The 415 naming the media types this endpoint reads."""
    return ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted "
                                                 "media types include: " + ", ".join(accepted))


def negotiate_output(accept: str, *, stream: bool = False) -> str:
    """The media type to answer in (JSON or YAML) for an ``Accept`` header, or the 406."""
    return _negotiated(accept, stream)


# Every request negotiates, and clients send the same few Accept headers: each is parsed once
# (a 406 is not kept, and is worked out again).
@functools.lru_cache(maxsize=256)
def _negotiated(accept: str, stream: bool) -> str:
    if not accept.strip():
        return JSON
    clauses = []
    for i, raw in enumerate(accept.split(",")):
        media, *params = (part.strip() for part in raw.split(";"))
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        clauses.append((-q, i, media.lower()))
    for neg_q, _, media in sorted(clauses):
        if neg_q >= 0:
            continue
        if media in (JSON, "application/*", "*/*"):
            return JSON
        if media == YAML and not stream:
            return YAML
    served = f"{JSON};stream=watch" if stream else f"{JSON}, {YAML}"
    raise ApiError(406, "NotAcceptable", "only the following media types are accepted: " + served)
