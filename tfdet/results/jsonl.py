"""The JSON Lines format of results files: a header line, then one record per
line, appended and flushed as work finishes so an interrupted run keeps
everything it wrote. This module knows lines and locks, not what records mean.
"""

import fcntl
import json
import os
import errno

from .errors import ResultsError, ResultsInUse, ResultsWriteError, describe_os_error


def read_lines(path):
    """[(line number, parsed JSON)] of a results file. Blank lines are skipped and
    a torn last line (a run killed mid-write) is dropped; any other line that
    is not JSON is a ResultsError naming path:line."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
    except OSError as exc:
        raise ResultsError("%s: cannot read: %s" % (path, exc.strerror or exc)) from None
    except UnicodeDecodeError:
        raise ResultsError("%s: not a tfdet results file (not UTF-8 text)" % path) from None
    parsed = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            parsed.append((number, json.loads(line)))
        except ValueError:
            if number == len(lines) or (number == len(lines) - 1 and not lines[-1]):
                break  # the line a killed run was writing
            raise ResultsError("%s:%d: not a tfdet results file (line is not JSON)" % (path, number)) from None
    return parsed


def _encode(record):
    data = record.to_json() if hasattr(record, "to_json") else record
    return json.dumps(data, sort_keys=True) + "\n"


class JsonLinesWriter(object):
    """The one writer of a results file, durable after each append().

    Claiming the file is atomic and exclusive: a new file is created with
    O_EXCL, an existing one is only continued (resume) or replaced by an
    atomic rename of a new file (overwrite), and an advisory lock
    (fcntl.flock) is held on it for the whole run, so a second writer fails at
    once with ResultsInUse instead of interleaving or truncating. Writes that
    fail (disk full, ...) raise ResultsWriteError and leave the file ending at
    its last complete line, so --resume continues it once the cause is fixed.
    """

    def __init__(self, path, resume=False, overwrite=False):
        self.path = path
        self.resume = resume
        self.fd = None
        self.started = False  # a header is on disk (written now, or the resumed file's)
        self._created = False
        self._good = 0
        self._claim(overwrite)

    # -- claiming the file -------------------------------------------------

    def _claim(self, overwrite):
        directory = os.path.dirname(os.path.abspath(self.path))
        try:
            if os.path.lexists(directory) and not os.path.isdir(directory):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), directory)
            os.makedirs(directory, exist_ok=True)
            if os.path.isdir(self.path):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), self.path)
            if self.resume:
                self.fd = self._open_existing() or self._create()
            elif overwrite and os.path.lexists(self.path):
                self.fd = self._replace()
            else:
                self.fd = self._create()
        except OSError as exc:
            raise ResultsWriteError(describe_os_error(exc, self.path, "cannot create")) from None

    def _lock(self, fd, what):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ResultsInUse(self._in_use(what)) from None

    def _in_use(self, what):
        return ("%s is in use: another tfdet run is writing it (%s); wait for that run to end or choose "
                "another --out" % (self.path, what))

    def _is_current(self, fd):
        """True if fd is still the file at self.path (not one an overwrite has since replaced)."""
        try:
            return os.path.samestat(os.fstat(fd), os.stat(self.path))
        except FileNotFoundError:
            return False

    def _create(self):
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise ResultsInUse("%s exists: add --resume to continue it or --overwrite to replace it"
                               % self.path) from None
        self._created = True
        self._lock(fd, "not started")
        return fd

    def _open_existing(self):
        """The existing file, opened without truncation and locked; None if there is none."""
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR)
            except FileNotFoundError:
                return None
            self._lock(fd, "--resume refused")
            if self._is_current(fd):
                return fd
            os.close(fd)  # replaced between open and lock: take the new one

    def _replace(self):
        """--overwrite: refuse if a live writer holds the old file; else rename a
        new, already locked file over it, holding the old one's lock meanwhile."""
        old = os.open(self.path, os.O_RDONLY)
        try:
            try:
                fcntl.flock(old, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ResultsInUse(self._in_use("--overwrite refused")) from None
            temp = "%s.tmp-%d" % (self.path, os.getpid())
            fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            try:
                os.replace(temp, self.path)
            except OSError:
                os.close(fd)
                os.unlink(temp)
                raise
        finally:
            os.close(old)
        self._created = True
        return fd

    # -- writing -----------------------------------------------------------

    def has_content(self):
        """True if the claimed file already holds a complete line (resume: there is something to continue)."""
        return self.resume and self._last_line_end() > 0

    def continue_after_last_line(self):
        """Resume: write after the last complete line (a torn one is cut off)."""
        self._good = self._last_line_end()
        self._truncate(self._good)
        self.started = True

    def write_header(self, header):
        """A new file: its first line."""
        self._good = 0
        self._truncate(0)
        self.append([header])
        self.started = True  # only now: close() removes a file whose header never reached it

    def rewrite_first_line(self, record):
        """Replace the first line (the header) with `record`, keeping every other
        line: a new file is written and locked beside this one, then renamed over
        it, so a reader or a crash sees the old file or the new one, never a mix."""
        os.lseek(self.fd, 0, os.SEEK_SET)
        data = b""
        while len(data) < self._good:
            chunk = os.read(self.fd, self._good - len(data))
            if not chunk:
                break
            data += chunk
        data = _encode(record).encode("utf-8") + data[data.find(b"\n") + 1:]
        temp = "%s.tmp-%d" % (self.path, os.getpid())
        try:
            fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
                os.replace(temp, self.path)
            except OSError:
                os.close(fd)
                os.unlink(temp)
                raise
        except OSError as exc:
            raise ResultsWriteError(describe_os_error(exc, self.path)) from None
        os.close(self.fd)
        self.fd, self._good = fd, len(data)

    def _last_line_end(self):
        data = b""
        os.lseek(self.fd, 0, os.SEEK_SET)
        while True:
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                return data.rfind(b"\n") + 1
            data += chunk

    def _truncate(self, size):
        try:
            os.ftruncate(self.fd, size)
        except OSError as exc:
            raise ResultsWriteError(describe_os_error(exc, self.path)) from None

    def append(self, records):
        """Write records (typed records or dicts) as lines, and fsync."""
        data = "".join(_encode(record) for record in records).encode("utf-8")
        if not data:
            return
        written = 0
        try:
            os.lseek(self.fd, self._good, os.SEEK_SET)
            view = memoryview(data)
            while view:
                count = os.write(self.fd, view)
                written += count
                view = view[count:]
            os.fsync(self.fd)
        except BaseException as exc:
            # Leave the file ending at its last complete line, so it reads and resumes.
            # Lines written in full stay: a Ctrl-C that lands in fsync (the slow part)
            # must not take back a record a reader may already have seen.
            kept = data.rfind(b"\n", 0, written) + 1
            try:
                os.ftruncate(self.fd, self._good + kept)
                self._good += kept
            except OSError:
                pass  # readers and --resume drop a torn last line anyway
            if isinstance(exc, OSError):
                raise ResultsWriteError(describe_os_error(exc, self.path)) from None
            raise
        self._good += len(data)

    def close(self):
        """Release the file. One this writer created and never wrote a header to
        (the run failed before it started) is removed, not left empty."""
        if self.fd is None:
            return
        try:
            if not self.started and self._created and self._is_current(self.fd) \
                    and os.fstat(self.fd).st_size == 0:
                os.unlink(self.path)
        except OSError:
            pass
        finally:
            os.close(self.fd)  # closing releases the lock
            self.fd = None


def read_typed_records(path, kind, schema_version, records):
    """[(record name, typed record)] of a results file whose first line is a `kind`
    header at `schema_version`; every line validated through `records` (name -> record
    class), errors naming file:line. One header only; the caller sorts the rest."""
    from .typed import RecordError

    lines = read_lines(path)
    if not lines:
        raise ResultsError("%s: empty, not a tfdet %s results file" % (path, kind))
    out, seen_header = [], False
    for number, data in lines:
        where = "%s:%d" % (path, number)
        name = data.get("record") if isinstance(data, dict) else None
        if number == lines[0][0]:
            if name != "header" or data.get("kind") != kind:
                raise ResultsError("%s: not a tfdet %s results file (no %s header)" % (where, kind, kind))
            if data.get("schema_version") != schema_version:
                raise ResultsError("%s: %s schema version %r; this tfdet reads version %d" % (
                    where, kind, data.get("schema_version"), schema_version))
        if name not in records:
            raise ResultsError("%s: unknown record %r" % (where, name))
        try:
            record = records[name].from_json(data, where)
        except RecordError as exc:
            raise ResultsError(str(exc)) from None
        if name == "header":
            if seen_header:
                raise ResultsError("%s: a second header" % where)
            seen_header = True
        out.append((name, record))
    return out
