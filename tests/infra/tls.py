"""TLS in front of the test broker: self-signed certificates and a TLS-terminating relay.

The Tansu build used here speaks plain TCP only, so the relay gives it a real TLS listener: each
client connection is a TLS session (Python's ssl module, server side) whose bytes are relayed
unchanged to the broker. The broker advertises the relay's address, so every connection a client
opens after bootstrapping goes through TLS too. The relay counts completed handshakes, which
proves the client did speak TLS.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import socket
import ssl
import threading
from pathlib import Path


def self_signed_certificate(directory: Path, name: str = "broker") -> tuple[Path, Path]:
    """(certificate.pem, key.pem) for 127.0.0.1, valid for a day."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    cert_path = directory / f"{name}-cert.pem"
    key_path = directory / f"{name}-key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


class TlsRelay:
    """Accept TLS on 127.0.0.1:`port`, relay each session's bytes to `upstream` (host, port)."""

    def __init__(self, port: int, upstream: tuple[str, int], cert_path: Path, key_path: Path) -> None:
        self.port = port
        self.upstream = upstream
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(str(cert_path), str(key_path))
        self.handshakes = 0
        self.failed_handshakes = 0
        self._listener = socket.create_server(("127.0.0.1", port))
        self._closing = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="tls-relay-accept", daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closing:
            try:
                raw, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw,), name="tls-relay-session", daemon=True).start()

    def _serve(self, raw: socket.socket) -> None:
        raw.settimeout(10)
        try:
            secure = self.context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            with self._lock:
                self.failed_handshakes += 1
            raw.close()
            return
        secure.settimeout(None)
        with self._lock:
            self.handshakes += 1
        try:
            upstream = socket.create_connection(self.upstream, timeout=10)
        except OSError:
            secure.close()
            return
        upstream.settimeout(None)
        with self._lock:
            self._sockets += [secure, upstream]
        threading.Thread(target=self._pump, args=(upstream, secure), daemon=True).start()
        self._pump(secure, upstream)

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                target.sendall(data)
        except (OSError, ValueError):  # ValueError: the other direction closed the TLS socket
            pass
        finally:
            for end in (source, target):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def drop_sessions(self) -> None:
        """Close every relayed connection, as a broker closing idle connections does; new
        connections are still accepted."""
        with self._lock:
            sessions, self._sockets = self._sockets, []
        for end in sessions:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                end.close()

    def close(self) -> None:
        self._closing = True
        self._listener.close()
        with self._lock:
            for end in self._sockets:
                with contextlib.suppress(OSError):
                    end.close()
