"""Where to reach the API server: a kubeconfig file (``--kubeconfig``, ``$KUBECONFIG``,
``~/.kube/config``) and its context, or the in-cluster service account.

What a kubeconfig user can hold, as kubectl reads it: ``token``, ``tokenFile``, client
certificates (paths or ``-data``), and ``exec`` credential plugins (``credentials.py`` runs them
and refreshes their tokens). A cluster can set ``certificate-authority[-data]``,
``insecure-skip-tls-verify``, ``tls-server-name`` (the name the server's certificate is checked
against, when it differs from the URL's host) and ``proxy-url`` (an ``http://`` or ``https://``
proxy; aiohttp speaks no SOCKS, so a ``socks5://`` proxy is a ConfigError, not a silent direct
connection). The in-cluster token is projected and rotates: it is re-read, never kept forever.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from scheduler.errors import SchedulerError
from scheduler.kubeapi.credentials import CredentialError, ExecCredentials, TokenFile

__all__ = ["ConfigError", "KubeConfig", "load_config"]

SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class ConfigError(SchedulerError):
    pass


@dataclass
class KubeConfig:
    server: str
    token: str | None = None
    ssl_context: ssl.SSLContext | bool | None = None
    namespace: str = "default"
    token_file: str | None = None
    # The same facts as files, for clients that want paths (Kopf's ConnectionInfo).
    ca_path: str | None = None
    cert_path: str | None = None
    key_path: str | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    proxy_url: str | None = None
    # A token that changes (an exec plugin's, or a rotated token file); built from token_file if unset.
    credentials: ExecCredentials | TokenFile | None = None

    def __post_init__(self) -> None:
        if self.credentials is None and self.token_file:
            self.credentials = TokenFile(self.token_file, fallback=self.token)

    def bearer(self) -> str | None:
        """The token to send now; may run an exec plugin (so, off the event loop: ``bearer_fresh``)."""
        if self.credentials is not None:
            return self.credentials.token()
        return self.token

    def bearer_fresh(self) -> bool:
        """Whether ``bearer()`` answers at once, without a file read or a command run."""
        return self.credentials is None or self.credentials.fresh()

    def refreshable(self) -> bool:
        """Whether a 401 may be cured by asking for the token again."""
        return self.credentials is not None

    def invalidate_bearer(self, refused: str | None = None) -> None:
        """The server answered 401 to ``refused`` (the token a request carried; None: whatever is
        held now): the next ``bearer()`` asks for a new one, unless it already has."""
        if self.credentials is not None:
            self.credentials.invalidate(refused)

    def expiration(self) -> datetime.datetime | None:
        """When the current token expires (exec plugins that say so), for Kopf's re-login."""
        if isinstance(self.credentials, ExecCredentials):
            return self.credentials.expiration()
        return None


def _data_file(entry: dict[str, Any], key: str) -> str | None:
    """The path of ``key``, or of ``key-data`` written to a file: one file per distinct content
    (named by its digest, mode 0600), so loading a kubeconfig again does not leave another copy
    in the temporary directory each time."""
    if entry.get(key):
        return str(entry[key])
    data = entry.get(f"{key}-data")
    if not data:
        return None
    try:
        raw = base64.b64decode(data)
    except ValueError:
        raise ConfigError(f"{key}-data is not base64") from None
    path = Path(tempfile.gettempdir()) / f"kopf-scheduler-{hashlib.sha256(raw).hexdigest()[:32]}"
    try:
        if not path.exists() or path.read_bytes() != raw:
            fd, tmp = tempfile.mkstemp(prefix="kopf-scheduler-", dir=path.parent)
            with os.fdopen(fd, "wb") as f:
                f.write(raw)
            os.replace(tmp, path)
    except OSError as e:
        raise ConfigError(f"cannot write {key}-data to {path}: {e}") from None
    return str(path)


def load_config(kubeconfig: str | None = None, context: str | None = None) -> KubeConfig:
    """Read a kubeconfig, else the in-cluster config; ConfigError says what is missing."""
    path = kubeconfig or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or None
    if path is None and not (SA_DIR / "token").exists():
        default = Path.home() / ".kube" / "config"
        path = str(default) if default.exists() else None
    if path is None:
        return _in_cluster()
    try:
        doc = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"cannot read kubeconfig {path}: {e}") from None
    ctx, cluster, user = _context(path, doc, context)
    server = str(cluster["server"]).rstrip("/")
    proxy = cluster.get("proxy-url") or None
    if proxy is not None and not str(proxy).startswith(("http://", "https://")):
        raise ConfigError(f"kubeconfig {path}: proxy-url {proxy!r}: only http:// and https:// proxies are supported")
    tls_name = cluster.get("tls-server-name") or None
    insecure = bool(cluster.get("insecure-skip-tls-verify"))
    sslctx, ca, cert, key = _tls(path, server, cluster, user, insecure)
    creds: ExecCredentials | None = None
    if user.get("exec"):
        info = {"server": server, "insecure-skip-tls-verify": insecure,
                **({"certificate-authority-data": cluster["certificate-authority-data"]}
                   if cluster.get("certificate-authority-data") else {}),
                **({"tls-server-name": tls_name} if tls_name else {}),
                **({"proxy-url": proxy} if proxy else {})}
        try:
            creds = ExecCredentials.from_kubeconfig(user["exec"], info)
        except CredentialError as e:
            raise ConfigError(f"kubeconfig {path}: {e}") from None
    return KubeConfig(server, token=user.get("token"), token_file=user.get("tokenFile"), ssl_context=sslctx,
                      namespace=ctx.get("namespace", "default"), ca_path=ca, cert_path=cert, key_path=key,
                      insecure=insecure, tls_server_name=tls_name, proxy_url=proxy, credentials=creds)


def _in_cluster() -> KubeConfig:
    """The pod's service account config (no kubeconfig found)."""
    if (SA_DIR / "token").exists() and os.environ.get("KUBERNETES_SERVICE_HOST"):
        ctx = ssl.create_default_context(cafile=str(SA_DIR / "ca.crt"))
        host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ.get("KUBERNETES_SERVICE_PORT", "443")
        ns = (SA_DIR / "namespace").read_text().strip() if (SA_DIR / "namespace").exists() else "default"
        return KubeConfig(f"https://{host}:{port}", token_file=str(SA_DIR / "token"), ssl_context=ctx,
                          namespace=ns, ca_path=str(SA_DIR / "ca.crt"))
    raise ConfigError("no kubeconfig: pass --kubeconfig, set KUBECONFIG, or run in a cluster")


def _context(path: str, doc: Any, context: str | None) -> tuple[Any, Any, Any]:
    """The chosen context of a kubeconfig document, its cluster (with a server) and its user."""
    ctx_name = context or doc.get("current-context")
    ctxs = {c["name"]: c.get("context", {}) for c in doc.get("contexts") or []}
    if ctx_name not in ctxs:
        raise ConfigError(f"kubeconfig {path}: context {ctx_name!r} not found (have: {', '.join(ctxs) or 'none'})")
    ctx = ctxs[ctx_name]
    clusters = {c["name"]: c.get("cluster", {}) for c in doc.get("clusters") or []}
    users = {u["name"]: u.get("user", {}) for u in doc.get("users") or []}
    cluster = clusters.get(ctx.get("cluster"))
    if cluster is None or not cluster.get("server"):
        raise ConfigError(f"kubeconfig {path}: cluster {ctx.get('cluster')!r} has no server")
    user = users.get(ctx.get("user"), {}) or {}
    return ctx, cluster, user


def _tls(path: str, server: str, cluster: Any, user: Any, insecure: bool
         ) -> tuple[ssl.SSLContext | bool | None, str | None, str | None, str | None]:
    """(SSL context, CA file, client certificate file, client key file) for an https server."""
    sslctx: ssl.SSLContext | bool | None = None
    ca = cert = key = None
    if server.startswith("https://"):
        if insecure:
            sslctx = False
        else:
            ca = _data_file(cluster, "certificate-authority")
            try:
                sslctx = ssl.create_default_context(cafile=ca)
            except (OSError, ssl.SSLError) as e:
                raise ConfigError(f"kubeconfig {path}: certificate-authority: {e}") from None
        cert, key = _data_file(user, "client-certificate"), _data_file(user, "client-key")
        if cert and key and isinstance(sslctx, ssl.SSLContext):
            sslctx.load_cert_chain(cert, key)
    return sslctx, ca, cert, key
