"""One library function per use case, each returning a report and printing nothing: the CLI's
commands, the batch job's tasks and the tests call the same path."""
