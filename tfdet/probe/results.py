"""The probe's results file: JSON Lines, a header then one record per
(case, pass, mode), appended and flushed as each case finishes so an
interrupted run keeps everything it measured."""

import errno
import fcntl
import json
import os

SCHEMA_VERSION = 1
OUTCOMES = ("deterministic", "varies", "raised", "failed", "skipped")


class ResultsError(ValueError):
    """A file that is not a tfdet results file, or one this tfdet cannot read."""


class ResultsInUse(ResultsError):
    """Another writer has the file, or it exists and was not to be replaced: a usage error."""


class ResultsMismatch(ResultsError):
    """--resume with parameters that would change what the file's records mean: a usage error."""


class ResultsWriteError(Exception):
    """The results file could not be written (disk full, permission, read-only, ...).
    The message is one line naming the path and the cause."""


def describe_os_error(exc, path, action="cannot write"):
    """'PATH: cannot write: No space left on device' from an OSError (its own
    file name, where it has one, is the more precise path)."""
    cause = exc.strerror or errno.errorcode.get(exc.errno or 0) or str(exc)
    return "%s: %s: %s" % (exc.filename or path, action, cause)


def read_results(path):
    """(header, records) of a results file. A truncated last line (a run
    killed mid-write) is dropped; anything else malformed is a ResultsError."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
    except OSError as exc:
        raise ResultsError("%s: cannot read: %s" % (path, exc.strerror or exc)) from None
    except UnicodeDecodeError:
        raise ResultsError("%s: not a tfdet results file (not UTF-8 text)" % path) from None
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            if number == len(lines) or (number == len(lines) - 1 and not lines[-1]):
                break  # the line a killed run was writing
            raise ResultsError("%s:%d: not a tfdet results file (line is not JSON)" % (path, number)) from None
    if not records or not isinstance(records[0], dict) or records[0].get("record") != "header":
        raise ResultsError("%s: not a tfdet results file (no header record on line 1)" % path)
    header = records[0]
    version = header.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ResultsError("%s: results schema version %r; this tfdet reads version %d" % (path, version, SCHEMA_VERSION))
    body = [r for r in records[1:] if isinstance(r, dict) and r.get("record") == "case"]
    ends = [r for r in records[1:] if isinstance(r, dict) and r.get("record") == "end"]
    if ends:  # written when a run finishes (again after each --resume): the last one counts
        header = dict(header, end=ends[-1])
    return header, body


def load_results(path):
    """A results file as a pandas DataFrame, one row per (case, pass, mode),
    with the run's TF version, device and file name on every row."""
    import pandas as pd

    header, records = read_results(path)
    frame = pd.DataFrame.from_records(records)
    environment = _first_environment(header)
    frame["tf_version"] = environment.get("tf_version")
    frame["device"] = environment.get("device")
    frame["results_file"] = os.path.basename(path)
    return frame


def _first_environment(header):
    environments = header.get("environment") or {}
    for mode in header.get("modes", []):
        if mode in environments:
            return environments[mode]
    return next(iter(environments.values()), {})


def record_key(record):
    return (record.get("case"), record.get("pass"), record.get("mode"))


# What --resume compares: every parameter that changes what a record means.
# (name, how to read it from a header). None means the file does not record it.
def _threads(header, kind):
    return (header.get("threads") or {}).get(kind)


def _onednn(header):
    if "onednn" in header:
        return header["onednn"]
    value = _first_environment(header).get("onednn")  # older files: the worker's TF_ENABLE_ONEDNN_OPTS
    return {"1": "on", "0": "off"}.get(value, value)


def modes_asked(header):
    """Every mode the run was asked to run, whether or not it could."""
    if "modes_asked" in header:
        return list(header["modes_asked"])
    return list(header.get("modes") or []) + [m for m in (header.get("unavailable_modes") or {})
                                              if m not in (header.get("modes") or [])]


def case_ids(header):
    """The catalogue ids (and fixtures) a run covers: planned and skipped, in order."""
    ids = []
    for item in list(header.get("planned") or []) + list(header.get("skipped") or []):
        if item and item[0] not in ids:
            ids.append(item[0])
    return ids


RESUME_PARAMETERS = (
    ("tf_version", lambda h: _first_environment(h).get("tf_version")),
    ("python", lambda h: _first_environment(h).get("python")),
    ("tfdet_version", lambda h: h.get("tfdet_version")),
    ("catalogue", lambda h: h.get("catalogue_digest")),
    ("ops", lambda h: sorted(case_ids(h)) if "planned" in h else None),
    ("modes", lambda h: sorted(modes_asked(h)) if "modes" in h else None),
    ("size", lambda h: h.get("size")),
    ("seed", lambda h: h.get("seed")),
    ("repeats", lambda h: h.get("repeats")),
    ("max_repeats", lambda h: h.get("max_repeats")),
    ("processes", lambda h: h.get("processes")),
    ("execution", lambda h: h.get("execution")),
    ("intra_op_threads", lambda h: _threads(h, "intra_op")),
    ("inter_op_threads", lambda h: _threads(h, "inter_op")),
    ("onednn", _onednn),
)


def resume_parameters(header):
    """{name: value} of the RESUME_PARAMETERS a header records (None: not recorded)."""
    return {name: read(header) for name, read in RESUME_PARAMETERS}


def resume_mismatches(old, new):
    """[(name, value in the file, value now)] where both are known and differ.
    A parameter the file does not record (older files) is not a mismatch."""
    before, after = resume_parameters(old), resume_parameters(new)
    return [(name, before[name], after[name]) for name, _ in RESUME_PARAMETERS
            if before[name] is not None and after[name] is not None and before[name] != after[name]]


def unrecorded_parameters(old):
    return [name for name, value in resume_parameters(old).items() if value is None]


def _show(value):
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def mismatch_message(path, mismatches):
    return "cannot resume %s: %s; resume with the file's values (leave those flags out) or start a new file" % (
        path, "; ".join("%s is %s in the file, %s here" % (name, _show(old), _show(new))
                        for name, old, new in mismatches))


class ResultsWriter(object):
    """The one writer of a results file, durable after each write_case().

    Claiming the file is atomic and exclusive: a new file is created with
    O_EXCL, an existing one is only continued (resume) or replaced by an
    atomic rename of a new file (overwrite), and an advisory lock
    (fcntl.flock) is held on it for the whole run, so a second writer fails at
    once with ResultsInUse instead of interleaving or truncating. Writes that
    fail (disk full, ...) raise ResultsWriteError and leave the file ending at
    its last complete line, so --resume continues it once the cause is fixed.
    """

    def __init__(self, path, header=None, resume=False, overwrite=False):
        self.path = path
        self.done = set()
        self.header = None
        self.resume = resume
        self.fd = None
        self._created = False
        self._claim(overwrite)
        if header is not None:
            try:
                self.start(header)
            except BaseException:
                self.close()
                raise

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
        return ("%s is in use: another tfdet probe is writing it (%s); wait for that run to end or choose "
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

    def existing_header(self):
        """The header of the file being resumed; None if it has no complete line
        yet (a run stopped before its header was on disk: nothing to continue)."""
        if not self.resume or self._last_line_end() == 0:
            return None
        return read_results(self.path)[0]

    def start(self, header):
        """Write the header of a new file, or (resume) check the file's header
        against this run's and continue after its last complete line."""
        if self.existing_header() is not None:
            old_header, records = read_results(self.path)
            mismatches = resume_mismatches(old_header, header)
            if mismatches:
                raise ResultsMismatch(mismatch_message(self.path, mismatches))
            self.header = old_header
            self.done = {record_key(r) for r in records}
            self._good = self._last_line_end()
            self._truncate(self._good)
        else:
            self._good = 0
            self._truncate(0)
            self._write([header])
            self.header = header  # only now: close() removes a file whose header never reached it

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

    def _write(self, records):
        data = "".join(json.dumps(record, sort_keys=True) + "\n" for record in records).encode("utf-8")
        if not data:
            return
        try:
            os.lseek(self.fd, self._good, os.SEEK_SET)
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view):]
            os.fsync(self.fd)
        except BaseException as exc:
            # Leave the file ending at its last complete line, so it reads and resumes.
            try:
                os.ftruncate(self.fd, self._good)
            except OSError:
                pass  # read_results and --resume drop a torn last line anyway
            if isinstance(exc, OSError):
                raise ResultsWriteError(describe_os_error(exc, self.path)) from None
            raise
        self._good += len(data)

    def write_case(self, records):
        fresh = [r for r in records if record_key(r) not in self.done]
        self._write(fresh)
        self.done.update(record_key(r) for r in fresh)

    def write_end(self, record):
        """The run's closing record (what it came to as a whole); readers put it in header["end"]."""
        self._write([record])

    def close(self):
        """Release the file. One this writer created and never wrote a header to
        (the run failed before it started) is removed, not left empty."""
        if self.fd is None:
            return
        try:
            if self.header is None and self._created and self._is_current(self.fd) \
                    and os.fstat(self.fd).st_size == 0:
                os.unlink(self.path)
        except OSError:
            pass
        finally:
            os.close(self.fd)  # closing releases the lock
            self.fd = None
