"""One module per subcommand; each exposes a click command named ``command``."""

# A real command line (cli.main() without argv; not a command run inside a test or another program) whose command
# holds nothing left to flush or close when it returns (``analyze``) ends its process without the interpreter's
# teardown: freeing a large trace's records one by one costs ~0.1 s per million events for nothing.
command_line = False  # set by cli.main
skip_teardown = False  # set by the command
