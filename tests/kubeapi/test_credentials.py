"""Exec credential plugins and rotated token files, as client-go's exec authenticator and
cachingTokenSource treat them (k8s.io/client-go/plugin/pkg/client/auth/exec/exec_test.go,
transport/token_source_test.go)."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from scheduler.kubeapi.credentials import CredentialError, ExecCredentials, TokenFile


def plugin(tmp_path: Path, body: str, name: str = "plugin") -> str:
    """An executable Python script; ``body`` runs with ``os``, ``json`` and ``sys`` imported."""
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\nimport os, json, sys\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def credential(token: str = "tok", expiry: str | None = None, api: str = "client.authentication.k8s.io/v1",
               **status: Any) -> str:
    st: dict[str, Any] = {"token": token, **status} if token else dict(status)
    if expiry:
        st["expirationTimestamp"] = expiry
    return json.dumps({"apiVersion": api, "kind": "ExecCredential", "status": st})


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


# 2030-01-01T00:00:00Z
EXPIRY = "2030-01-01T00:00:00Z"
EXPIRY_EPOCH = 1893456000.0


def test_token_is_kept_until_it_expires_then_the_plugin_runs_again(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    cmd = plugin(tmp_path, f"n = int(open({str(counter)!r}).read()) + 1 if os.path.exists({str(counter)!r}) else 1\n"
                           f"open({str(counter)!r}, 'w').write(str(n))\n"
                           f"print({credential('T', EXPIRY)!r}.replace('\"T\"', json.dumps(f'tok-{{n}}')))")
    clock = Clock(EXPIRY_EPOCH - 60)
    creds = ExecCredentials(command=cmd, clock=clock)
    assert creds.token() == "tok-1"
    assert creds.token() == "tok-1" and creds.runs == 1          # fresh: no second run
    assert creds.expiration() is not None and creds.expiration().timestamp() == EXPIRY_EPOCH  # type: ignore[union-attr]
    clock.now = EXPIRY_EPOCH - 0.1                                # within the refresh margin
    assert not creds.fresh()
    assert creds.token() == "tok-2" and creds.runs == 2
    creds.invalidate()                                            # the server said 401
    assert creds.token() == "tok-3"


def test_a_token_that_arrives_near_its_expiry_serves_half_of_what_it_has_left(tmp_path: Path) -> None:
    """A plugin that hands out a token close to its stated expiry (its own cache) must not run again
    for every request until it issues a newer one: the token is used for half its remaining life."""
    cmd = plugin(tmp_path, f"print({credential('near', EXPIRY)!r})")
    clock = Clock(EXPIRY_EPOCH - 0.6)               # within REFRESH_MARGIN already
    creds = ExecCredentials(command=cmd, clock=clock)
    assert creds.token() == "near" and creds.runs == 1
    clock.now += 0.29
    assert creds.fresh() and creds.token() == "near" and creds.runs == 1
    clock.now += 0.02
    assert not creds.fresh()
    clock.now = EXPIRY_EPOCH + 1                    # an expired one is asked for again each time
    assert creds.token() == "near" and creds.runs == 2 and not creds.fresh()

def test_a_401_for_a_token_already_replaced_runs_nothing(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    cmd = plugin(tmp_path, f"n = int(open({str(counter)!r}).read()) + 1 if os.path.exists({str(counter)!r}) else 1\n"
                           f"open({str(counter)!r}, 'w').write(str(n))\n"
                           f"print({credential('T')!r}.replace('\"T\"', json.dumps(f'tok-{{n}}')))")
    creds = ExecCredentials(command=cmd)
    assert creds.token() == "tok-1"
    creds.invalidate(refused="tok-1")            # the current token was refused: run again
    assert creds.token() == "tok-2" and creds.runs == 2
    creds.invalidate(refused="tok-1")            # a late 401 for the token already replaced
    assert creds.fresh() and creds.token() == "tok-2" and creds.runs == 2


def test_a_401_for_a_token_file_already_reread_reads_nothing(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("one")
    tf = TokenFile(str(path), clock=Clock(100.0))
    assert tf.token() == "one"
    path.write_text("two")
    tf.invalidate(refused="one")
    assert tf.token() == "two"
    path.write_text("three")
    tf.invalidate(refused="one")                 # stale: "two" is held and still within its period
    assert tf.fresh() and tf.token() == "two"

def test_a_token_without_expiry_is_kept_until_invalidated(tmp_path: Path) -> None:
    creds = ExecCredentials(command=plugin(tmp_path, f"print({credential('forever')!r})"))
    assert creds.token() == "forever" and creds.fresh() and creds.expiration() is None
    creds.invalidate()
    assert not creds.fresh()


def test_kubeconfig_env_args_and_exec_info_reach_the_plugin(tmp_path: Path) -> None:
    cmd = plugin(tmp_path, "info = json.loads(os.environ['KUBERNETES_EXEC_INFO'])\n"
                           "tok = '|'.join([os.environ['FOO'], sys.argv[1], info['apiVersion'], str(info['spec'])])\n"
                           "print(json.dumps({'apiVersion': info['apiVersion'], 'kind': 'ExecCredential', "
                           "'status': {'token': tok}}))")
    entry = {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": cmd, "args": ["arg1"],
             "env": [{"name": "FOO", "value": "bar"}], "provideClusterInfo": True}
    creds = ExecCredentials.from_kubeconfig(entry, {"server": "https://127.0.0.1:1"})
    assert creds.token() == ("bar|arg1|client.authentication.k8s.io/v1beta1|"
                             "{'interactive': False, 'cluster': {'server': 'https://127.0.0.1:1'}}")


# (case, plugin body or missing command, kubeconfig apiVersion, the error's text)
EXEC_ERRORS = [
    ("missing command", None, "client.authentication.k8s.io/v1", "exec: executable /nonexistent/aws not found"
                                                                 "\n\ninstall the aws cli"),
    ("non-zero exit", "sys.stderr.write('boom\\n'); sys.exit(3)", "client.authentication.k8s.io/v1",
     "failed with exit code 3: boom"),
    ("not JSON", "print('hello')", "client.authentication.k8s.io/v1", "exec: decoding stdout"),
    ("other kind", "print(json.dumps({'kind': 'Pod'}))", "client.authentication.k8s.io/v1",
     "stdout is not an ExecCredential"),
    # exec.go: "exec plugin is configured to use API version %s, plugin returned version %s"
    ("version mismatch", f"print({credential('t', api='client.authentication.k8s.io/v1beta1')!r})",
     "client.authentication.k8s.io/v1", "exec plugin is configured to use API version client.authentication.k8s.io/v1, "
                                        "plugin returned version client.authentication.k8s.io/v1beta1"),
    ("no status", "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential'}))",
     "client.authentication.k8s.io/v1", "exec plugin didn't return a status field"),
    ("no token", f"print({credential('')!r})", "client.authentication.k8s.io/v1",
     "exec plugin didn't return a token or cert/key pair"),
    ("bad expiry", f"print({credential('t', 'tomorrow')!r})", "client.authentication.k8s.io/v1",
     "invalid expirationTimestamp 'tomorrow'"),
]


@pytest.mark.parametrize("case,body,api,message", EXEC_ERRORS, ids=[c[0] for c in EXEC_ERRORS])
def test_plugin_failures_are_clear_errors(tmp_path: Path, case: str, body: str | None, api: str, message: str) -> None:
    entry = {"apiVersion": api, "command": plugin(tmp_path, body) if body else "/nonexistent/aws",
             "installHint": "install the aws cli"}
    with pytest.raises(CredentialError) as e:
        ExecCredentials.from_kubeconfig(entry).token()
    assert message in str(e.value)


@pytest.mark.parametrize("entry,message", [
    ({"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "x"}, "invalid apiVersion"),
    ({"apiVersion": "client.authentication.k8s.io/v1"}, "exec plugin has no command"),
    ({"apiVersion": "client.authentication.k8s.io/v1", "command": "x", "env": [{"value": "v"}]}, "has no name"),
])
def test_bad_exec_entries_are_refused(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(CredentialError, match=message):
        ExecCredentials.from_kubeconfig(entry)


def test_token_file_is_reread_once_a_period_and_after_a_401(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("one\n")
    clock = Clock(100.0)
    tf = TokenFile(str(path), clock=clock)
    assert tf.token() == "one"
    path.write_text("two")                      # the kubelet rotated it
    clock.now += 59
    assert tf.token() == "one"                  # not re-read per request
    clock.now += 2
    assert tf.token() == "two"
    path.write_text("three")
    tf.invalidate()
    assert tf.token() == "three"
    path.unlink()                               # mid-rotation: keep the last token, never go anonymous
    tf.invalidate()
    assert tf.token() == "three"
