"""Test certificates, made at test time (no key is ever committed).

`make_certificate(folder)` writes a self-signed certificate that is its own CA, for
`localhost` and `127.0.0.1`, and its unencrypted PKCS#8 key; clients trust the certificate
file itself. `keystore` also writes key + certificate in one PEM file, the shape Kafka's
`ssl.keystore.type=PEM` reads.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from pathlib import Path


def make_certificate(folder: Path, common_name: str = "standin.test") -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = dt.datetime.now(dt.timezone.utc)
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    cert_file, key_file = folder / f"{common_name}-cert.pem", folder / f"{common_name}-key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


def keystore(cert_file: Path, key_file: Path) -> Path:
    """Key and certificate in one PEM file (Kafka's PEM keystore)."""
    store = cert_file.with_name(cert_file.name.replace("-cert.pem", "-keystore.pem"))
    store.write_bytes(key_file.read_bytes() + cert_file.read_bytes())
    return store
