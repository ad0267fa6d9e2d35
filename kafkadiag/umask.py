"""The process's umask, which files kafkadiag creates (reports, capture bundles) honour."""

from __future__ import annotations

import os


def current_umask() -> int:
    mask = os.umask(0)  # the only way to read it is to set it; restored at once
    os.umask(mask)
    return mask
