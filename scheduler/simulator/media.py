"""Request media types, as kube-apiserver's ``NegotiateInputSerializer`` accepts them.

The rule is to advertise only what is served. Request bodies are JSON, YAML, and protobuf for the built-in
kinds whose encoding ``protobuf.py`` knows; the 415 for any other body lists exactly those (custom
resources, as upstream, take no protobuf). Responses are always JSON, which every client accepts
(client-go's typed clients send ``Accept: application/vnd.kubernetes.protobuf,application/json``).
"""

from __future__ import annotations

from scheduler.simulator.admission import ApiError

__all__ = ["JSON", "PROTOBUF", "YAML", "unsupported_media_type"]

JSON, YAML, PROTOBUF = "application/json", "application/yaml", "application/vnd.kubernetes.protobuf"


def unsupported_media_type(accepted: tuple[str, ...] | list[str]) -> ApiError:
    """The 415 naming the media types this endpoint reads."""
    return ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted "
                                                 "media types include: " + ", ".join(accepted))
