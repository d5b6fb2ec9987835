"""Start a child process the way a terminal starts a command, whatever started the test run."""
import signal


def default_sigint() -> None:
    """``preexec_fn`` for ``subprocess.Popen``: SIGINT back to its default action in the child.

    A test run launched in the background of a non-interactive shell (``cmd &``, as some CI
    runners do) inherits SIGINT ignored, and so would every child; Python then installs no
    KeyboardInterrupt handler, and a test that sends Ctrl-C to a script would see it ignored.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
