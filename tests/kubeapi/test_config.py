"""Kubeconfig fields kubectl accepts: exec users, tls-server-name, proxy-url, insecure-skip-tls-verify."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.kubeapi.config import ConfigError, load_config
from scheduler.kubeapi.credentials import ExecCredentials, TokenFile


def kubeconfig(tmp_path: Path, cluster: dict[str, Any], user: dict[str, Any]) -> str:
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
           "clusters": [{"name": "c", "cluster": cluster}], "users": [{"name": "u", "user": user}],
           "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(doc))
    return str(path)




def test_exec_user_becomes_exec_credentials(tmp_path: Path) -> None:
    cfg = load_config(kubeconfig(tmp_path, {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": True,
                                            "tls-server-name": "kubernetes.default", "proxy-url": "http://127.0.0.1:3128"},
                                 {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "aws",
                                           "args": ["eks", "get-token"], "provideClusterInfo": True}}))
    assert isinstance(cfg.credentials, ExecCredentials)
    assert cfg.credentials.command == "aws" and cfg.credentials.args == ["eks", "get-token"]
    assert cfg.credentials.cluster == {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": True,
                                       "tls-server-name": "kubernetes.default", "proxy-url": "http://127.0.0.1:3128"}
    assert cfg.tls_server_name == "kubernetes.default" and cfg.proxy_url == "http://127.0.0.1:3128"
    assert cfg.insecure and cfg.ssl_context is False and cfg.refreshable()


def test_token_file_user_is_reread(tmp_path: Path) -> None:
    (tmp_path / "tok").write_text("abc")
    cfg = load_config(kubeconfig(tmp_path, {"server": "http://127.0.0.1:1"}, {"tokenFile": str(tmp_path / "tok")}))
    assert isinstance(cfg.credentials, TokenFile) and cfg.bearer() == "abc"


def test_static_token_is_not_refreshable(tmp_path: Path) -> None:
    cfg = load_config(kubeconfig(tmp_path, {"server": "http://127.0.0.1:1"}, {"token": "abc"}))
    assert cfg.bearer() == "abc" and cfg.bearer_fresh() and not cfg.refreshable()


@pytest.mark.parametrize("cluster,user,message", [
    ({"server": "https://h", "proxy-url": "socks5://127.0.0.1:1080"}, {}, "only http:// and https:// proxies"),
    ({"server": "https://h"}, {"exec": {"apiVersion": "v1", "command": "x"}}, "exec plugin: invalid apiVersion"),
    ({"server": "https://h", "certificate-authority": "/nonexistent/ca.crt"}, {}, "certificate-authority"),
])
def test_unusable_kubeconfigs_are_config_errors(tmp_path: Path, cluster: dict[str, Any], user: dict[str, Any],
                                                message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(kubeconfig(tmp_path, cluster, user))
