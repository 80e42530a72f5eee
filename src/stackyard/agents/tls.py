"""TLS between a central and its agents.

An agent serves HTTPS with a certificate it makes on its first start (a P-256 key, self-
signed, ten years) or one the user gives. Its SHA-256 fingerprint is logged at start and
shown by the central when the agent is added: the user compares the two and the central
pins the certificate. A pinned certificate is the only one the central's TLS context
trusts (hostnames are not checked: the pin is the identity), so a changed certificate
fails the handshake before the token is sent. A central can trust a CA instead (then
hostnames are checked as usual), and plain HTTP stays possible behind a TLS proxy."""

from __future__ import annotations

import asyncio
import datetime
import functools
import hashlib
import socket
import ssl
from pathlib import Path
from urllib.parse import urlsplit

from stackyard.errors import AgentUnreachable, Invalid
from stackyard.fs.atomic import write_atomic

CERT_NAME, KEY_NAME = "agent-tls.crt", "agent-tls.key"


def fingerprint(certificate_der: bytes) -> str:
    """`AB:CD:...`: the SHA-256 of the certificate, as `openssl x509 -fingerprint
    -sha256` prints it."""
    digest = hashlib.sha256(certificate_der).hexdigest().upper()
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


@functools.lru_cache(maxsize=4096)  # (every pinned agent's, at every list of agents)
def pem_fingerprint(certificate_pem: str) -> str:
    return fingerprint(ssl.PEM_cert_to_DER_cert(certificate_pem))


def ensure_certificate(data_dir: Path) -> tuple[Path, Path]:
    """The agent's certificate and key in its data folder, made on the first start."""
    cert_path, key_path = data_dir / CERT_NAME, data_dir / KEY_NAME
    if cert_path.exists() and key_path.exists():
        return cert_path, key_path
    # Loaded only here: a central, and every later start of an agent, never needs them.
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, f"stackyard-agent {socket.gethostname()}")]
    )
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName(socket.gethostname()), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    write_atomic(key_path, key_pem, mode=0o600)
    write_atomic(cert_path, certificate.public_bytes(serialization.Encoding.PEM), mode=0o600)
    return cert_path, key_path


def certificate_fingerprint(cert_path: Path) -> str:
    return pem_fingerprint(cert_path.read_text())


def client_context(pinned_pem: str | None, ca_pem: str | None) -> ssl.SSLContext:
    """The context a central connects to an HTTPS agent with: the pinned certificate
    alone, or a CA's (with hostnames checked)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if ca_pem:
        context.load_verify_locations(cadata=ca_pem)
        return context
    if not pinned_pem:
        raise Invalid("An HTTPS agent needs a pinned certificate or a CA certificate")
    context.check_hostname = False
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN  # the pinned leaf is the anchor
    context.load_verify_locations(cadata=pinned_pem)
    return context


async def presented_certificate(url: str, timeout: float) -> str:
    """The certificate (PEM) the server at `url` presents, read without trusting it:
    what the user is asked to pin, or what replaced a pinned one."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise Invalid("Only an https:// agent URL has a certificate")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        _, writer = await asyncio.wait_for(
            asyncio.open_connection(parts.hostname, parts.port or 443, ssl=context), timeout
        )
    except (OSError, TimeoutError, ssl.SSLError) as exc:
        raise AgentUnreachable(
            f"No TLS connection to {parts.netloc}: {exc or type(exc).__name__}"
        ) from exc
    try:
        ssl_object = writer.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object else None
    finally:
        writer.close()
    if not der:
        raise AgentUnreachable(f"{parts.netloc} presented no certificate")
    return ssl.DER_cert_to_PEM_cert(der)
