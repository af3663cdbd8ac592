"""Bearer tokens that change: exec credential plugins and projected service-account tokens.

Managed clusters put an ``exec`` entry in the kubeconfig's user (``aws eks get-token``,
``gke-gcloud-auth-plugin``, ``kubelogin``): a command that prints a
``client.authentication.k8s.io/v1`` (or ``v1beta1``) ``ExecCredential`` with a token and, usually,
an ``expirationTimestamp``. As client-go's exec authenticator does, ``ExecCredentials`` runs the
command when it has no token, when the token has expired, and after the API server answered 401
(``invalidate``), passing ``KUBERNETES_EXEC_INFO`` and the kubeconfig's ``env``. A token is
refreshed a little *before* it expires (``REFRESH_MARGIN``), so a request never leaves with a
token that expires in flight.

In-cluster, the service-account token is projected and rotated by the kubelet. client-go re-reads
it at most once a minute (``cachingTokenSource``); ``TokenFile`` does the same, and re-reads at
once after a 401. Neither reads a file or runs a command per request.

Both are thread-safe: the Kopf side calls them from its handler threads, the scheduler's client
from its event loop (through ``asyncio.to_thread`` when a refresh is due, so a slow plugin never
stalls the loop).
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduler.errors import SchedulerError

__all__ = ["EXEC_API_VERSIONS", "REFRESH_MARGIN", "CredentialError", "ExecCredentials", "TokenFile"]

EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
REFRESH_MARGIN = 0.5            # seconds before expirationTimestamp at which a token counts as expired
EXEC_TIMEOUT = 60.0             # an interactive or hung plugin must not hang the scheduler forever
TOKEN_FILE_PERIOD = 60.0        # client-go's cachingTokenSource period for the in-cluster token


class CredentialError(SchedulerError):
    """The credential plugin could not be run, or printed something that is not an ExecCredential."""


def _parse_time(text: str) -> float:
    """RFC 3339 (what the plugin prints) → epoch seconds."""
    value = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    return value.timestamp()


@dataclass
class ExecCredentials:
    """A kubeconfig user's ``exec`` entry, run on demand; the last token is kept until it expires."""

    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    api_version: str = "client.authentication.k8s.io/v1"
    install_hint: str = ""
    cluster: dict[str, Any] | None = None       # spec.cluster when provideClusterInfo is set
    clock: Callable[[], float] = time.time
    _token: str | None = field(default=None, init=False, repr=False)
    _expiry: float | None = field(default=None, init=False)
    _refresh_at: float | None = field(default=None, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    runs: int = field(default=0, init=False)    # how many times the command ran (tests, debugging)

    @classmethod
    def from_kubeconfig(cls, entry: Mapping[str, Any], cluster: Mapping[str, Any] | None = None,
                        ) -> ExecCredentials:
        if not entry.get("command"):
            raise CredentialError("kubeconfig: exec plugin has no command")
        api_version = str(entry.get("apiVersion") or "")
        if api_version not in EXEC_API_VERSIONS:
            raise CredentialError(f"kubeconfig: exec plugin: invalid apiVersion {api_version!r} "
                                  f"(want one of {', '.join(EXEC_API_VERSIONS)})")
        env = {}
        for item in entry.get("env") or []:
            if not isinstance(item, Mapping) or "name" not in item:
                raise CredentialError(f"kubeconfig: exec plugin: env entry {item!r} has no name")
            env[str(item["name"])] = str(item.get("value", ""))
        return cls(command=str(entry["command"]), args=[str(a) for a in entry.get("args") or []], env=env,
                   api_version=api_version, install_hint=str(entry.get("installHint") or ""),
                   cluster=dict(cluster) if cluster is not None and entry.get("provideClusterInfo") else None)

    def fresh(self) -> bool:
        """Whether ``token()`` would answer without running the command."""
        return self._token is not None and (self._refresh_at is None or self.clock() < self._refresh_at)

    def expiration(self) -> datetime.datetime | None:
        self.token()
        return None if self._expiry is None else datetime.datetime.fromtimestamp(self._expiry, datetime.UTC)

    def invalidate(self, refused: str | None = None) -> None:
        """The server refused the token (401): the next ``token()`` runs the command again. With
        ``refused``, only if that is still the current token: when many requests in flight come
        back 401 with the same expired token, the first one's refresh serves them all (client-go's
        exec authenticator compares the refused credentials with the current ones the same way),
        instead of each running the plugin again."""
        with self._lock:
            if refused is None or refused == self._token:
                self._token = None

    def token(self) -> str:
        with self._lock:
            if not self.fresh():
                self._token, self._expiry = self._run()
                # Refresh REFRESH_MARGIN before the stated expiry, but a token that arrives with less
                # than twice that left is still used for half of what it has: otherwise a plugin
                # that hands out tokens close to their expiry (a token cache) would run again for
                # every request until it issues a newer one.
                now = self.clock()
                self._refresh_at = (None if self._expiry is None else
                                    self._expiry - min(REFRESH_MARGIN, max(0.0, self._expiry - now) / 2))
            assert self._token is not None
            return self._token

    def _run(self) -> tuple[str, float | None]:
        spec: dict[str, Any] = {"interactive": False}
        if self.cluster is not None:
            spec["cluster"] = self.cluster
        info = {"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec}
        env = {**os.environ, **self.env, "KUBERNETES_EXEC_INFO": json.dumps(info)}
        self.runs += 1
        try:
            done = subprocess.run([self.command, *self.args], env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=EXEC_TIMEOUT, check=False)
        except FileNotFoundError:
            hint = f"\n\n{self.install_hint}" if self.install_hint else ""
            raise CredentialError(f"exec: executable {self.command} not found{hint}") from None
        except (OSError, subprocess.TimeoutExpired) as e:
            raise CredentialError(f"exec: executable {self.command} failed: {e}") from None
        if done.returncode != 0:
            err = done.stderr.decode(errors="replace").strip().splitlines()
            raise CredentialError(f"exec: executable {self.command} failed with exit code {done.returncode}"
                                  + (f": {err[-1]}" if err else ""))
        return self._decode(done.stdout)

    def _decode(self, out: bytes) -> tuple[str, float | None]:
        try:
            cred = json.loads(out)
        except ValueError as e:
            raise CredentialError(f"exec: decoding stdout: {e}") from None
        if not isinstance(cred, dict) or cred.get("kind") != "ExecCredential":
            raise CredentialError("exec: stdout is not an ExecCredential")
        if cred.get("apiVersion") != self.api_version:
            raise CredentialError(f"exec plugin is configured to use API version {self.api_version}, "
                                  f"plugin returned version {cred.get('apiVersion')}")
        status = cred.get("status")
        if not isinstance(status, dict):
            raise CredentialError("exec plugin didn't return a status field")
        token = status.get("token")
        if not token:
            if status.get("clientCertificateData"):
                raise CredentialError("exec: plugins that return client certificates are not supported; "
                                      "kopf-scheduler uses the token form of ExecCredential")
            raise CredentialError("exec plugin didn't return a token or cert/key pair")
        expiry = status.get("expirationTimestamp")
        try:
            return str(token), _parse_time(str(expiry)) if expiry else None
        except ValueError:
            raise CredentialError(f"exec: invalid expirationTimestamp {expiry!r}") from None


@dataclass
class TokenFile:
    """A token file re-read at most once a ``period`` (and at once after a 401), as client-go does
    for the projected service-account token the kubelet rotates."""

    path: str
    fallback: str | None = None
    period: float = TOKEN_FILE_PERIOD
    clock: Callable[[], float] = time.monotonic
    _token: str | None = field(default=None, init=False, repr=False)
    _read_at: float = field(default=float("-inf"), init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def fresh(self) -> bool:
        return self._token is not None and self.clock() - self._read_at < self.period

    def invalidate(self, refused: str | None = None) -> None:
        """A 401: re-read the file at the next ``token()``, unless ``refused`` is no longer the
        token held (another request's 401 already re-read it)."""
        with self._lock:
            if refused is None or refused == self._token:
                self._read_at = float("-inf")

    def token(self) -> str | None:
        with self._lock:
            if not self.fresh():
                try:
                    self._token = Path(self.path).read_text().strip()
                except OSError:
                    # Keep the last token read (or the kubeconfig's own): a rotation in progress
                    # must not turn into anonymous requests.
                    self._token = self._token or self.fallback
                self._read_at = self.clock()
            return self._token
