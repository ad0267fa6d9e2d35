import sys

from kafkadiag.cli import main

sys.exit(main())
