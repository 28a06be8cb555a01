"""How a command that runs trainings (diverge, compare) ends: SIGTERM as Ctrl-C, and
the results layer's errors as one line with its exit code."""

import contextlib
import signal

from .exitcodes import ENVIRONMENT, INVALID_INPUT, USAGE, WRITE_FAILED, CommandError
from .probe_cmd import _end_like_ctrl_c_on_sigterm


@contextlib.contextmanager
def training_run(environment=(), invalid_input=()):
    """Around a run of trainings: SIGTERM ends it as Ctrl-C does (finished trainings
    kept); a results file in use or written for another run is a usage error, one that
    cannot be written exit 5, a malformed one (or `invalid_input`) exit 3, and the
    feature's `environment` errors and the executor's exit 4."""
    from ..executor import ExecutorError
    from ..results import ResultsError, ResultsInUse, ResultsMismatch, ResultsWriteError

    terminate = _end_like_ctrl_c_on_sigterm()
    try:
        yield
    except (ResultsInUse, ResultsMismatch) as exc:
        raise CommandError(str(exc), USAGE) from None
    except ResultsWriteError as exc:
        raise CommandError(str(exc), WRITE_FAILED) from None
    except (ResultsError,) + tuple(invalid_input) as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
    except tuple(environment) + (ExecutorError,) as exc:
        raise CommandError(str(exc), ENVIRONMENT) from None
    finally:
        if terminate is not None:
            signal.signal(signal.SIGTERM, terminate)
