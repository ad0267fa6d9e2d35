"""HTTP GET for the Jolokia and Prometheus sources: bounded, with a timeout and clear errors."""

from __future__ import annotations

import base64
import os
import urllib.error
import urllib.request

from kafkadiag.collect.jmx_errors import HttpMetricsUnreachableError, MetricsSourceError

# An exporter page of a busy JVM is a few MB; anything far larger is not what kafkadiag expects.
MAX_BYTES = 64 * 1024 * 1024


def http_get(
    url: str, timeout_s: float, describe: str, user_env: str, password_env: str
) -> tuple[int, bytes]:
    """(HTTP status, body). Basic credentials come from the two environment variables, if set."""
    request = urllib.request.Request(url, headers={"Accept": "application/json, text/plain;q=0.9, */*;q=0.1"})
    user = os.environ.get(user_env)
    if user:
        token = base64.b64encode(f"{user}:{os.environ.get(password_env, '')}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return int(response.status), response.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as error:
        body = error.read(MAX_BYTES + 1) if error.fp is not None else b""
        if error.code in (401, 403):
            raise MetricsSourceError(
                f"{describe}: HTTP {error.code} {error.reason} for {url}",
                help_text=f"The endpoint wants credentials kafkadiag may use: set {user_env} and "
                f"{password_env} (environment, so they do not show in `ps`) to a read-only user.",
            ) from None
        return int(error.code), body
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        raise HttpMetricsUnreachableError(f"{describe}: cannot GET {url}: {reason}") from None
