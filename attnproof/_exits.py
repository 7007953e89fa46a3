"""Exit codes of the ``attnproof`` command, in a module that imports nothing."""

EXIT_OK, EXIT_NOT_OK, EXIT_USAGE, EXIT_OUTPUT = 0, 1, 2, 3
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143
