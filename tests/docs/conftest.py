"""The maxlag tests' real consumer JVM, for the JSON keys of `maxlag` and a live `diagnose`."""

from tests.maxlag.conftest import jmx_client_cache, reproducer_classes, start

__all__ = ["jmx_client_cache", "reproducer_classes", "start"]
