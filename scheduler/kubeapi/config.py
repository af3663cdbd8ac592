"""Where to reach the API server: a kubeconfig file (``--kubeconfig``, ``$KUBECONFIG``,
``~/.kube/config``) and its context, or the in-cluster service account."""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from scheduler.errors import SchedulerError

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

    def bearer(self) -> str | None:
        if self.token_file:
            try:
                return Path(self.token_file).read_text().strip()
            except OSError:
                return self.token
        return self.token


def _data_file(entry: dict[str, Any], key: str) -> str | None:
    if entry.get(key):
        return str(entry[key])
    data = entry.get(f"{key}-data")
    if data:
        fd, name = tempfile.mkstemp(prefix="kopf-scheduler-")
        with os.fdopen(fd, "wb") as f:
            f.write(base64.b64decode(data))
        return name
    return None


def load_config(kubeconfig: str | None = None, context: str | None = None) -> KubeConfig:
    """Read a kubeconfig, else the in-cluster config; ConfigError says what is missing."""
    path = kubeconfig or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or None
    if path is None and not (SA_DIR / "token").exists():
        default = Path.home() / ".kube" / "config"
        path = str(default) if default.exists() else None
    if path is None:
        if (SA_DIR / "token").exists() and os.environ.get("KUBERNETES_SERVICE_HOST"):
            ctx = ssl.create_default_context(cafile=str(SA_DIR / "ca.crt"))
            host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ.get("KUBERNETES_SERVICE_PORT", "443")
            ns = (SA_DIR / "namespace").read_text().strip() if (SA_DIR / "namespace").exists() else "default"
            return KubeConfig(f"https://{host}:{port}", token_file=str(SA_DIR / "token"), ssl_context=ctx,
                              namespace=ns, ca_path=str(SA_DIR / "ca.crt"))
        raise ConfigError("no kubeconfig: pass --kubeconfig, set KUBECONFIG, or run in a cluster")
    try:
        doc = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"cannot read kubeconfig {path}: {e}") from None
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
    user = users.get(ctx.get("user"), {})
    server = str(cluster["server"]).rstrip("/")
    sslctx: ssl.SSLContext | bool | None = None
    ca = cert = key = None
    insecure = bool(cluster.get("insecure-skip-tls-verify"))
    if server.startswith("https://"):
        if insecure:
            sslctx = False
        else:
            ca = _data_file(cluster, "certificate-authority")
            sslctx = ssl.create_default_context(cafile=ca)
        cert, key = _data_file(user, "client-certificate"), _data_file(user, "client-key")
        if cert and key and isinstance(sslctx, ssl.SSLContext):
            sslctx.load_cert_chain(cert, key)
    return KubeConfig(server, token=user.get("token"), token_file=user.get("tokenFile"), ssl_context=sslctx,
                      namespace=ctx.get("namespace", "default"), ca_path=ca, cert_path=cert, key_path=key,
                      insecure=insecure)
