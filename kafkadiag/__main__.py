from kafkadiag.cli import console_main

console_main()
