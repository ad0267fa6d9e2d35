"""Numbers read from text someone else wrote: ASCII digits only, and never too many.

`str.isdigit()` is true for superscripts and other digits `int()` refuses (`"1313²"`), and
`int()` refuses more than 4,300 decimal digits (the interpreter's limit on quadratic
conversions); both once ended a dump's reading with a ValueError (exit 4). Every decimal number
of a parser goes through here: what is not a plain number of at most MAX_DIGITS digits is None,
as an absent field is. (`re`'s `\\d` matches any script's digits, which `int()` reads: the length is
what these helpers add there.)
"""

from __future__ import annotations

import re

# A 64-bit id, offset or nanosecond time has at most 20 digits; a line number, far fewer.
MAX_DIGITS = 24

_DECIMAL = re.compile(rf"[0-9]{{1,{MAX_DIGITS}}}")
_SIGNED = re.compile(rf"-?[0-9]{{1,{MAX_DIGITS}}}")
# cpu=83.69ms, elapsed=1.81s: digits, one optional fraction.
_FRACTION = re.compile(rf"[0-9]{{1,{MAX_DIGITS}}}(?:\.[0-9]{{1,{MAX_DIGITS}}})?")


def all_ascii_digits(text: str) -> bool:
    """Nothing but ASCII digits, however many (`str.isdigit()` alone also takes `²`)."""
    return text.isascii() and text.isdigit()


def is_decimal(text: str | None) -> bool:
    """ASCII digits only, at least one and at most MAX_DIGITS."""
    return text is not None and _DECIMAL.fullmatch(text) is not None


def decimal(text: str | None) -> int | None:
    """The number `text` spells in ASCII digits (up to MAX_DIGITS), else None."""
    return int(text) if text is not None and _DECIMAL.fullmatch(text) else None


def signed_decimal(text: str | None) -> int | None:
    """As `decimal`, with an optional leading minus (os_prio=-1)."""
    return int(text) if text is not None and _SIGNED.fullmatch(text) else None


def decimal_fraction(text: str | None) -> float | None:
    """`83.69`, `2`: ASCII digits with at most one fraction; None for `0..4` or `2.0.5`."""
    return float(text) if text is not None and _FRACTION.fullmatch(text) else None
