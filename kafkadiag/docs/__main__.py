"""`python -m kafkadiag.docs PAGE`: print a generated page of docs/ (see the package docstring)."""

from __future__ import annotations

import sys

from kafkadiag.docs import inputs

PAGES = {"inputs": inputs.render}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in PAGES:
        print(f"usage: python -m kafkadiag.docs {{{'|'.join(PAGES)}}}", file=sys.stderr)
        return 2
    sys.stdout.write(PAGES[argv[0]]())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
