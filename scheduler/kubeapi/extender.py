"""``HTTPExtender``: a ``spec.extenders[]`` entry spoken to over HTTP (upstream's ``extender.go``).

The edge half of ``scheduler/framework/extender.py``: the core calls the ``Extender`` Protocol,
this module POSTs JSON to ``<urlPrefix>/<verb>`` and reads the answer, in upstream's wire types
(``k8s.io/kube-scheduler/extender/v1``, which carry no JSON tags, so the keys are the Go field
names)::

    filter, prioritize   ExtenderArgs {Pod, Nodes: v1.NodeList | null, NodeNames: [..] | null}
                         (NodeNames instead of Nodes when nodeCacheCapable)
      → filter           ExtenderFilterResult {Nodes, NodeNames, FailedNodes, FailedAndUnresolvableNodes, Error}
      → prioritize       HostPriorityList [{Host, Score}]
    bind                 ExtenderBindingArgs {PodName, PodNamespace, PodUID, Node} → ExtenderBindingResult {Error}
    preempt              ExtenderPreemptionArgs {Pod, NodeNameToVictims | NodeNameToMetaVictims}
                         → ExtenderPreemptionResult {NodeNameToMetaVictims: {node: {Pods: [{UID}], NumPDBViolations}}}

Answers are read as Go's ``encoding/json`` reads them: keys match field names case-insensitively,
unknown keys are ignored, ``null`` leaves a field empty, only the first JSON value counts, and a
wrong type is an error worded as Go's (``json: cannot unmarshal string into Go struct field
HostPriority.Score of type int64``). Every failure is an ``ExtenderError`` with upstream's text:
``Post "<url>": context deadline exceeded (Client.Timeout exceeded while awaiting headers)``,
``failed <verb> with extender at URL <url>, code <status>``, or the answer's own ``Error``.

filter, prioritize and preempt are called from the synchronous scheduling cycle, so they block, on
a fresh connection each call, for at most ``httpTimeout`` in all (connect, TLS handshake, send,
headers and body, as Go's ``http.Client.Timeout``; a timer shuts the socket down at the deadline,
so an extender that trickles its answer a byte at a time is cut off too; a body over 64 MiB is
refused). The service runs such cycles on a thread of their own, and the cycle lets go of the
cache while a call is out (``framework/extender.py``), so the worker's loop keeps serving. bind
runs in the async binding cycle (aiohttp, the same deadline). TLS follows upstream's
``makeTransport``: ``tlsConfig`` as a client-go TLS config, and
``enableHTTPS`` without a CA does not verify the extender's certificate.

The pod and nodes sent are the objects as the watch delivered them (``ObjectSource``, kept by the
service while a profile has extenders). An object seen before that has no body until its next
event; it is sent as the scheduler keeps it (``pod_object`` / ``node_object``: names, labels,
the scheduling fields), and so are preemption's victims when the extender is not nodeCacheCapable.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson

from scheduler.errors import SchedulerError
from scheduler.framework.extender import ExtenderFilterResult, ObjectSource, Victims
from scheduler.kubeapi.config import _data_file
from scheduler.model import Node, Pod
from scheduler.profiles.extender_config import ExtenderConfig, ExtenderTLSConfig

__all__ = ["MAX_BODY", "ExtenderError", "HTTPExtender", "http_extender", "node_object", "pod_object"]

MAX_BODY = 64 << 20


class ExtenderError(SchedulerError):
    """An extender call failed; the message is upstream's for the same failure."""


def http_extender(config: ExtenderConfig, objects: ObjectSource) -> HTTPExtender:
    """The ``ExtenderFactory`` the app hands to ``SchedulerService``."""
    return HTTPExtender(config, objects)


# --- objects as sent ---------------------------------------------------------------------------
def _quantity(resource: str, v: int) -> str:
    if resource == "cpu":
        return str(v // 1000) if v % 1000 == 0 else f"{v}m"
    return str(v)


def pod_object(pod: Pod) -> dict[str, Any]:
    """A pod as the scheduler keeps it, for an extender when its body is not kept."""
    spec: dict[str, Any] = {"schedulerName": pod.scheduler_name, "priority": pod.priority,
                            "preemptionPolicy": pod.preemption_policy}
    if pod.node_name:
        spec["nodeName"] = pod.node_name
    if pod.node_selector:
        spec["nodeSelector"] = dict(pod.node_selector)
    status: dict[str, Any] = {"phase": pod.phase}
    if pod.nominated_node_name:
        status["nominatedNodeName"] = pod.nominated_node_name
    if pod.start_time:
        status["startTime"] = pod.start_time
    return {"metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid, "labels": dict(pod.labels)},
            "spec": spec, "status": status}


def node_object(node: Node) -> dict[str, Any]:
    """A node as the scheduler keeps it, for an extender when its body is not kept."""
    alloc = {r: _quantity(r, v) for r, v in node.allocatable.items()}
    spec: dict[str, Any] = {}
    if node.taints:
        spec["taints"] = [{"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect}
                          for t in node.taints]
    if node.unschedulable:
        spec["unschedulable"] = True
    return {"metadata": {"name": node.name, "uid": node.uid, "labels": dict(node.labels)}, "spec": spec,
            "status": {"capacity": alloc, "allocatable": alloc}}


# --- reading answers as Go's encoding/json does ------------------------------------------------
def _go_char(c: str) -> str:
    """Go's ``quoteChar``: ``'x'``, ``'\\''``, ``'"'``, control characters escaped."""
    if c == "'":
        return "'\\''"
    if c == '"':
        return "'\"'"
    return f"'{c if c.isprintable() else json.dumps(c)[1:-1]}'"


def _open_container(text: str, pos: int) -> str:
    """The innermost ``{`` or ``[`` still open at ``pos`` (strings skipped)."""
    stack: list[str] = []
    in_str = esc = False
    for ch in text[:pos]:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else ""


_LITERALS = {"n": "null", "t": "true", "f": "false"}


def decode_first(data: bytes) -> Any:
    """The first JSON value of ``data`` (``json.Decoder.Decode``), or ValueError worded as Go's."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
    stripped = text.lstrip(" \t\r\n")
    if not stripped:
        raise ValueError("EOF")
    try:
        value, _ = json.JSONDecoder().raw_decode(stripped)
    except json.JSONDecodeError as e:
        if e.pos >= len(stripped) or e.msg.startswith("Unterminated string"):
            raise ValueError("unexpected EOF") from None
        c = _go_char(stripped[e.pos])
        if e.msg == "Expecting ':' delimiter":
            where = "after object key"
        elif e.msg == "Expecting ',' delimiter":
            where = ("after object key:value pair" if _open_container(stripped, e.pos) == "{"
                     else "after array element")
        elif e.msg.startswith("Expecting property name"):
            where = "looking for beginning of object key string"
        elif e.msg.startswith("Invalid control character"):
            where = "in string literal"
        elif e.msg.startswith("Invalid"):
            where = "in string escape code"
        elif stripped[e.pos] in _LITERALS:
            # Go's scanner starts a literal at its first letter and fails at the first that differs.
            lit, rest = _LITERALS[stripped[e.pos]], stripped[e.pos:]
            for i, want in enumerate(lit):
                if i >= len(rest):
                    raise ValueError("unexpected EOF") from None
                if rest[i] != want:
                    raise ValueError(f"invalid character {_go_char(rest[i])} in literal {lit} "
                                     f"(expecting {_go_char(want)})") from None
            where = "after top-level value"
        else:
            where = "looking for beginning of value"
        raise ValueError(f"invalid character {c} {where}") from None
    return value


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


class _Reader:
    """Typed reads of a decoded answer, with Go's unmarshal errors (the first one is raised)."""

    def fail(self, v: Any, path: str, go_type: str) -> ExtenderError:
        got = _json_type(v)
        if got == "number" and go_type in ("int64", "int"):
            got = f"number {json.dumps(v)}"
        where = f"Go struct field {path}" if path else "Go value"
        return ExtenderError(f"json: cannot unmarshal {got} into {where} of type {go_type}")

    @staticmethod
    def field(obj: Mapping[str, Any], name: str) -> Any:
        """A struct field's value: the exact key, else any key equal to it ignoring case."""
        if name in obj:
            return obj[name]
        low = name.lower()
        for k, v in obj.items():
            if isinstance(k, str) and k.lower() == low:
                return v
        return None

    def struct(self, v: Any, path: str, go_type: str) -> Mapping[str, Any] | None:
        if v is None:
            return None
        if not isinstance(v, dict):
            raise self.fail(v, path, go_type)
        return v

    def string(self, v: Any, path: str) -> str:
        if v is None:
            return ""
        if not isinstance(v, str):
            raise self.fail(v, path, "string")
        return v

    def int64(self, v: Any, path: str) -> int:
        if v is None:
            return 0
        if isinstance(v, bool) or not isinstance(v, int) or not -(2**63) <= v < 2**63:
            raise self.fail(v, path, "int64")
        return v

    def strings(self, v: Any, path: str) -> list[str] | None:
        if v is None:
            return None
        if not isinstance(v, list):
            raise self.fail(v, path, "[]string")
        return [self.string(x, path) for x in v]

    def string_map(self, v: Any, path: str, go_type: str) -> dict[str, str]:
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise self.fail(v, path, go_type)
        return {k: self.string(x, path) for k, x in v.items()}

    def array(self, v: Any, path: str, go_type: str) -> list[Any] | None:
        if v is None:
            return None
        if not isinstance(v, list):
            raise self.fail(v, path, go_type)
        return v


# --- TLS, as upstream's makeTransport ----------------------------------------------------------
def _ssl_context(config: ExtenderConfig) -> ssl.SSLContext | None:
    """The TLS context for an ``https://`` extender; ``None`` for ``http://``. Raises ValueError
    (the profile is refused) for a TLS config that cannot be loaded."""
    if urlsplit(config.url_prefix).scheme != "https":
        return None
    tls = config.tls_config
    has_ca = tls is not None and bool(tls.ca_file or tls.ca_data)
    insecure = (tls is not None and tls.insecure) or (config.enable_https and not has_ca)
    if tls is not None and tls.insecure and has_ca:
        raise ValueError("specifying a root certificates file with the insecure flag is not allowed")
    try:
        ctx = _verifying_context(tls, insecure)
        if tls is not None and (tls.cert_data or tls.cert_file) and (tls.key_data or tls.key_file):
            cert = _data_file({"c-data": tls.cert_data} if tls.cert_data else {"c": tls.cert_file}, "c")
            key = _data_file({"k-data": tls.key_data} if tls.key_data else {"k": tls.key_file}, "k")
            assert cert is not None and key is not None
            ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as e:
        raise ValueError(f"tlsConfig: {e}") from None
    return ctx


def _verifying_context(tls: ExtenderTLSConfig | None, insecure: bool) -> ssl.SSLContext:
    """A context that verifies nothing (insecure), or the server against the configured CA."""
    if insecure:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    if tls is not None and tls.ca_data:
        return ssl.create_default_context(cadata=_pem(tls.ca_data))
    return ssl.create_default_context(cafile=tls.ca_file if tls is not None and tls.ca_file else None)


def _pem(data: str) -> str:
    return base64.b64decode(data).decode("ascii", "replace")


# --- the extender ------------------------------------------------------------------------------
def _deadline_error(url: str, headers_read: bool) -> ExtenderError:
    """Go's http.Client timeout text: before the headers, or while reading the body."""
    if headers_read:
        return ExtenderError("context deadline exceeded (Client.Timeout or context cancellation while reading body)")
    return ExtenderError(f'Post "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)')


class HTTPExtender:
    """One extender (upstream's ``HTTPExtender``); implements ``framework.extender.Extender``."""

    def __init__(self, config: ExtenderConfig, objects: ObjectSource) -> None:
        self._config = config
        self.objects = objects
        self.timeout = config.timeout
        self._managed = config.managed
        self._ssl = _ssl_context(config)

    # --- what it is ---
    @property
    def name(self) -> str:
        return self._config.url_prefix

    @property
    def config(self) -> ExtenderConfig:
        return self._config

    @property
    def weight(self) -> int:
        return self._config.weight

    def is_ignorable(self) -> bool:
        return self._config.ignorable

    def is_filter(self) -> bool:
        return bool(self._config.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self._config.prioritize_verb)

    def is_binder(self) -> bool:
        return bool(self._config.bind_verb)

    def supports_preemption(self) -> bool:
        return bool(self._config.preempt_verb)

    def is_interested(self, pod: Pod) -> bool:
        """Upstream's ``IsInterested``: no managed resources, or one of them named in the requests
        or limits of a container or an init container. Without the pod's body, its requests (the
        API server copies limits into them) stand in."""
        if not self._managed:
            return True
        body = self.objects.pod(pod)
        if body is None:
            return any(r in self._managed for r in pod.requests)
        spec = body.get("spec") or {}
        for kind in ("containers", "initContainers"):
            for c in spec.get(kind) or ():
                res = (c.get("resources") or {}) if isinstance(c, dict) else {}
                for part in ("requests", "limits"):
                    if any(r in self._managed for r in (res.get(part) or {})):
                        return True
        return False

    # --- what it is sent ---
    def _pod(self, pod: Pod) -> Mapping[str, Any]:
        body = self.objects.pod(pod)
        return body if body is not None else pod_object(pod)

    def _args(self, pod: Pod, nodes: Sequence[Node]) -> dict[str, Any]:
        if self._config.node_cache_capable:
            return {"Pod": self._pod(pod), "Nodes": None, "NodeNames": [n.name for n in nodes]}
        items = []
        for n in nodes:
            body = self.objects.node(n.name)
            items.append(body if body is not None else node_object(n))
        return {"Pod": self._pod(pod), "Nodes": {"metadata": {}, "items": items}, "NodeNames": None}

    # --- the verbs ---
    def filter(self, pod: Pod, nodes: Sequence[Node]) -> ExtenderFilterResult:
        names = [n.name for n in nodes]
        if not self.is_filter():
            return ExtenderFilterResult(tuple(names))
        raw = self._send(self._config.filter_verb, self._args(pod, nodes))
        r = _Reader()
        obj = r.struct(raw, "", "v1.ExtenderFilterResult") or {}
        node_list = r.struct(r.field(obj, "Nodes"), "ExtenderFilterResult.Nodes", "v1.NodeList")
        node_names = r.strings(r.field(obj, "NodeNames"), "ExtenderFilterResult.NodeNames")
        failed = r.string_map(r.field(obj, "FailedNodes"), "ExtenderFilterResult.FailedNodes", "v1.FailedNodesMap")
        unresolvable = r.string_map(r.field(obj, "FailedAndUnresolvableNodes"),
                                    "ExtenderFilterResult.FailedAndUnresolvableNodes", "v1.FailedNodesMap")
        error = r.string(r.field(obj, "Error"), "ExtenderFilterResult.Error")
        kept: list[str] = []
        if node_list is not None:
            items = r.array(node_list.get("items"), "ExtenderFilterResult.Nodes.items", "[]v1.Node") or []
            for item in items:
                meta = r.struct(item, "ExtenderFilterResult.Nodes.items", "v1.Node") or {}
                m = r.struct(meta.get("metadata"), "ExtenderFilterResult.Nodes.items.metadata", "v1.ObjectMeta") or {}
                kept_name = r.string(m.get("name"), "ExtenderFilterResult.Nodes.items.metadata.name")
                kept.append(kept_name)
        if error:
            raise ExtenderError(error)
        given = set(names)
        if self._config.node_cache_capable and node_names is not None:
            result = node_names
        elif node_list is not None:
            result = kept
        else:
            result = []         # neither list: it kept nothing
        for n in result:
            if n not in given:
                raise ExtenderError(f"extender {json.dumps(self.name)} claims a filtered node {json.dumps(n)} "
                                    f"which is not found in the input node list")
        return ExtenderFilterResult(tuple(result), failed, unresolvable)

    def prioritize(self, pod: Pod, nodes: Sequence[Node]) -> tuple[list[tuple[str, int]], int]:
        if not self.is_prioritizer():
            return [(n.name, 0) for n in nodes], 0
        raw = self._send(self._config.prioritize_verb, self._args(pod, nodes))
        r = _Reader()
        items = r.array(raw, "", "v1.HostPriorityList") or []
        out: list[tuple[str, int]] = []
        for item in items:
            hp = r.struct(item, "", "v1.HostPriority") or {}
            out.append((r.string(r.field(hp, "Host"), "HostPriority.Host"),
                        r.int64(r.field(hp, "Score"), "HostPriority.Score")))
        return out, self._config.weight

    async def bind(self, pod: Pod, node: str) -> None:
        if not self.is_binder():
            raise ExtenderError("unexpected empty bindVerb in extender")
        raw = await self._send_async(self._config.bind_verb, {
            "PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": pod.uid, "Node": node})
        r = _Reader()
        obj = r.struct(raw, "", "v1.ExtenderBindingResult") or {}
        error = r.string(r.field(obj, "Error"), "ExtenderBindingResult.Error")
        if error:
            raise ExtenderError(error)

    def process_preemption(self, pod: Pod, victims: Mapping[str, Victims],
                           pods_on: Callable[[str], Mapping[str, Pod] | None]) -> dict[str, Victims]:
        if not self.supports_preemption():
            raise ExtenderError(f"preempt verb is not defined for extender {self.name} but run into "
                                f"ProcessPreemption")
        if self._config.node_cache_capable:
            meta = {n: {"Pods": [{"UID": p.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                    for n, v in victims.items()}
            args: dict[str, Any] = {"Pod": self._pod(pod), "NodeNameToVictims": None, "NodeNameToMetaVictims": meta}
        else:
            full = {n: {"Pods": [self._pod(p) for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                    for n, v in victims.items()}
            args = {"Pod": self._pod(pod), "NodeNameToVictims": full, "NodeNameToMetaVictims": None}
        raw = self._send(self._config.preempt_verb, args)
        r = _Reader()
        obj = r.struct(raw, "", "v1.ExtenderPreemptionResult") or {}
        by_node = r.struct(r.field(obj, "NodeNameToMetaVictims"), "ExtenderPreemptionResult.NodeNameToMetaVictims",
                           "map[string]*v1.MetaVictims") or {}
        out: dict[str, Victims] = {}
        for node, mv in by_node.items():
            path = "ExtenderPreemptionResult.NodeNameToMetaVictims"
            m = r.struct(mv, path, "v1.MetaVictims")
            if m is None:
                out[node] = Victims(())            # a null entry: no victims (the caller decides)
                continue
            uids = []
            for mp in r.array(r.field(m, "Pods"), f"{path}.Pods", "[]*v1.MetaPod") or []:
                meta_pod = r.struct(mp, f"{path}.Pods", "v1.MetaPod") or {}
                uids.append(r.string(r.field(meta_pod, "UID"), f"{path}.Pods.UID"))
            out[node] = self._victims(node, uids, r.int64(r.field(m, "NumPDBViolations"),
                                                          f"{path}.NumPDBViolations"), pods_on)
        return out

    def _victims(self, node: str, uids: list[str], violations: int,
                 pods_on: Callable[[str], Mapping[str, Pod] | None]) -> Victims:
        """Upstream's ``convertToVictims``: the pods it names, found on that node by uid."""
        on = pods_on(node)
        if on is None:
            raise ExtenderError(f"nodeinfo not found for node name {json.dumps(node)}")
        pods = []
        for uid in uids:
            p = on.get(uid)
            if p is None:
                raise ExtenderError(f"extender: {self.name} claims to preempt pod (UID: &{{{uid}}}) on node: {node}, "
                                    f"but the pod is not found on that node")
            pods.append(p)
        return Victims(tuple(pods), violations)

    # --- the wire ---
    def _url(self, verb: str) -> str:
        return self.name.rstrip("/") + "/" + verb

    def _send(self, verb: str, args: Mapping[str, Any]) -> Any:
        """POST ``args`` to the verb and decode the answer, within ``timeout`` in all.

        Go's ``http.Client.Timeout`` bounds the whole exchange (connect, TLS handshake, send,
        headers, body). A socket timeout alone bounds each read, and an extender that trickles a
        byte a second would never trip it, so a ``_Deadline`` shuts the socket down when the time
        is up, which ends whatever read or write is blocked on it."""
        url = self._url(verb)
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        body = orjson.dumps(args)
        cut = _Deadline(self.timeout)
        # The socket is made (and its TLS handshake done) here, so the deadline covers them too;
        # http.client then speaks HTTP/1.1 over it.
        conn = http.client.HTTPConnection(host, port, timeout=self.timeout)
        headers_read = False
        try:
            try:
                sock = socket.create_connection((host, port), timeout=cut.left())
            except ConnectionRefusedError:
                raise ExtenderError(f'Post "{url}": dial tcp {host}:{port}: connect: connection refused') from None
            cut.watch(sock)
            if self._ssl is not None:
                sock = self._ssl.wrap_socket(sock, server_hostname=host, do_handshake_on_connect=False)
                cut.watch(sock)
                sock.settimeout(cut.left())
                sock.do_handshake()
            conn.sock = sock
            sock.settimeout(cut.left())
            conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            sock.settimeout(cut.left())
            resp = conn.getresponse()
            if cut.expired():               # the headers ended because the deadline cut them short
                raise TimeoutError
            headers_read = True
            if resp.status != 200:
                raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status}")
            chunks: list[bytes] = []
            size = 0
            while True:                         # bounded: each read takes data, or the deadline ends it
                sock.settimeout(cut.left())
                chunk = resp.read1(65536)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_BODY:
                    raise ExtenderError(f"failed {verb} with extender at URL {url}: the answer is over "
                                        f"{MAX_BODY >> 20} MiB")
                chunks.append(chunk)
            if cut.expired():
                raise TimeoutError          # cut short: what was read is not the whole answer
        except TimeoutError:
            raise _deadline_error(url, headers_read) from None
        except ssl.SSLCertVerificationError as e:
            raise ExtenderError(f'Post "{url}": tls: failed to verify certificate: {e.verify_message}') from None
        except (OSError, http.client.HTTPException) as e:
            if cut.expired():               # the deadline shut the socket: a timeout, whatever it raised
                raise _deadline_error(url, headers_read) from None
            if isinstance(e, http.client.RemoteDisconnected):
                raise ExtenderError(f'Post "{url}": EOF') from None
            raise ExtenderError(f'Post "{url}": {e}') from None
        finally:
            cut.stop()
            conn.close()
        try:
            return decode_first(b"".join(chunks))
        except ValueError as e:
            raise ExtenderError(str(e)) from None

    async def _send_async(self, verb: str, args: Mapping[str, Any]) -> Any:
        """``_send`` for the binding cycle, on its event loop."""
        url = self._url(verb)
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        headers_read = False
        try:
            async with aiohttp.ClientSession(timeout=timeout) as session, session.post(
                    url, data=orjson.dumps(args), headers={"Content-Type": "application/json"},
                    ssl=self._ssl if self._ssl is not None else True) as resp:
                headers_read = True
                if resp.status != 200:
                    raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status}")
                chunks: list[bytes] = []
                size = 0
                async for chunk in resp.content.iter_any():     # bounded by the session's total timeout
                    size += len(chunk)
                    if size > MAX_BODY:
                        raise ExtenderError(f"failed {verb} with extender at URL {url}: the answer is over "
                                            f"{MAX_BODY >> 20} MiB")
                    chunks.append(chunk)
                data = b"".join(chunks)
        except TimeoutError:
            raise _deadline_error(url, headers_read) from None
        except aiohttp.ClientConnectorCertificateError as e:
            raise ExtenderError(f'Post "{url}": tls: failed to verify certificate: {e.certificate_error}') from None
        except aiohttp.ClientConnectorError as e:
            if isinstance(e.os_error, ConnectionRefusedError):
                raise ExtenderError(f'Post "{url}": dial tcp {host}:{port}: connect: connection refused') from None
            raise ExtenderError(f'Post "{url}": {e}') from None
        except aiohttp.ServerDisconnectedError:
            raise ExtenderError(f'Post "{url}": EOF') from None
        except (aiohttp.ClientError, OSError) as e:
            raise ExtenderError(f'Post "{url}": {type(e).__name__}: {e}') from None
        try:
            return decode_first(data)
        except ValueError as e:
            raise ExtenderError(str(e)) from None


class _Deadline:
    """A whole call's deadline over blocking sockets: ``left()`` is the time that remains (raises
    TimeoutError when none does), and at the deadline a timer shuts every watched socket down, so
    a read that keeps receiving a byte at a time (each within its own timeout) ends too."""

    def __init__(self, seconds: float) -> None:
        self._at = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._expired = False
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True
        self._timer.start()

    def left(self) -> float:
        left = self._at - time.monotonic()
        if left <= 0 or self._expired:
            raise TimeoutError
        return left

    def expired(self) -> bool:
        return self._expired or time.monotonic() >= self._at

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._socks.append(sock)
            expired = self._expired
        if expired:
            _shutdown(sock)

    def stop(self) -> None:
        self._timer.cancel()

    def _cut(self) -> None:
        with self._lock:
            self._expired = True
            socks = list(self._socks)
        for sock in socks:
            _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    """Shut the descriptor down under whatever is blocked on it (for a TLS socket, the plain
    socket's shutdown: ``SSLSocket.shutdown`` would drop its TLS state under a reader)."""
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
