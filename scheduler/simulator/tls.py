"""A throw-away self-signed certificate for 127.0.0.1, so the simulated cluster serves HTTPS.

kubectl (client-go) sends a bearer token only over TLS, so a token-protected server must speak
HTTPS. The certificate is its own CA; the kubeconfig carries it as ``certificate-authority-data``.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["SelfSigned"]


class SelfSigned:
    """A key and a self-signed certificate (its own CA) for localhost, 127.0.0.1, ::1 and ``hosts``,
    written to ``directory/<stem>.crt`` and ``.key``. The simulated cluster uses one; so does the
    scheduler's secure port when no ``--tls-cert-file`` is given, as kube-scheduler generates one."""

    def __init__(self, directory: Path, *, common_name: str = "kopf-scheduler-sim", stem: str = "apiserver",
                 hosts: tuple[str, ...] = ()) -> None:
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        now = dt.datetime.now(dt.UTC)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
                .not_valid_after(now + dt.timedelta(days=30))
                .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                            x509.IPAddress(ipaddress.ip_address("::1")),
                                                            *(x509.DNSName(h) for h in hosts)]),
                               critical=False)
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .sign(key, hashes.SHA256()))
        self.cert_pem = cert.public_bytes(serialization.Encoding.PEM)
        key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        self.cert_file = directory / f"{stem}.crt"
        self.key_file = directory / f"{stem}.key"
        self.cert_file.write_bytes(self.cert_pem)
        self.key_file.write_bytes(key_pem)
        self.key_file.chmod(0o600)

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(str(self.cert_file), str(self.key_file))
        return ctx

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cadata=self.cert_pem.decode())
