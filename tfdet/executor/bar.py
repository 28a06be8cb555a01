"""The progress bar of a run of executor jobs (rich): description, bar, done/total, time."""


def start_bar(stream, description, total, time_left=True):
    """A started, transient bar on `stream` and its task; time left (or, time_left=False, elapsed)."""
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    timing = (TextColumn("left"), TimeRemainingColumn()) if time_left else (TimeElapsedColumn(),)
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), *timing,
                   console=Console(file=stream, highlight=False), transient=True)
    bar.start()
    return bar, bar.add_task(description, total=total)
