"""tfdet.patch(), unpatch(), status() and deterministic(): who holds the patch
(explicit patch() calls, nested and concurrent with-blocks) and when it is
undone. The changes themselves are made and undone by tfdet.patching.apply."""

import contextlib
import functools
import os
import sys
import threading
import warnings

from ..tfinfo import detect_device
from . import apply as apply_
from . import bindings, registry, watch
from .errors import TfdetError, TfdetWarning  # noqa: F401 - re-exported: tfdet.TfdetWarning
from .plan import plan_patch
from .status import Status

_lock = threading.RLock()
# Who holds the patch: "applied" is the one Applied record (None: stock TF);
# "explicit" is True once patch() was called directly (held until unpatch());
# "blocks" counts the open deterministic() blocks. The patch is undone when the
# last holder lets go: unpatch(), or the last block's exit with no patch() call.
_state = {"applied": None, "explicit": False, "blocks": 0}


def _tf():
    import tensorflow as tf

    return tf


def patch(seed=None, strict=False, catalogue=None, environ=None, quiet=False, on_unsupported="raise", device=None,
          batch_invariant=False):
    """Make this process's TensorFlow as reproducible as the catalogue knows how.

    Turns on every determinism switch the installed TF has, substitutes
    tfdet's deterministic replacements where the catalogue says the installed
    TF and device need them, and seeds everything when `seed` is given. Call it
    right after importing TensorFlow, before any op runs. Idempotent and
    thread-safe; undo with unpatch(). Returns status().

    `catalogue` is a Catalogue or the path of a catalogue file of your own
    (default: the shipped one); an invalid one raises TfdetError naming each
    problem by file:line. `environ` is the mapping the switches' environment
    variables are written to (default os.environ); unpatch() restores that one.

    It prints one line to stderr saying what it switched on and replaced
    (`quiet=True` silences it). Every TfdetWarning that status() lists is also
    issued through the warnings module (filter it there), quiet or not.
    From then on, a TensorFlow op callback watches
    the program (tf.function tracing, graph building and eager ops) for the
    catalogued ops the patch does not cover: the first use of each warns once
    (a TfdetWarning naming the op, the user's file:line and the fix; filter it
    with the warnings module), or, with `strict=True`, raises TfdetError there,
    so a program that uses nothing uncovered runs clean under strict. On TF
    older than 2.2 (no op callbacks) it warns once at patch time naming every
    not-covered source, and strict raises then. TF keeps op callbacks per
    thread: ops built in other threads than this one are not watched.

    A replacement takes effect where a function is called or a tf.function is
    traced while patched: a tf.function traced earlier keeps the stock ops, and
    one traced while patched keeps the replacements after unpatch() (its graph
    is built; retrace it, or build a new one, to change that).

    While patched, a second patch() changes nothing but the seed (a new
    seed= reseeds; strict=True on a patch made without it warns); it also
    makes the patch outlive any open tfdet.deterministic() block, until
    unpatch().

    `device` ("cpu" or "gpu") chooses the plan: the replacements and switches
    the catalogue gives for this TF on that device, installed even where the
    device is absent (so a CPU-only laptop can run what a GPU cluster will).
    Default: the environment variable TFDET_DEVICE, else the device TF sees.
    status() says which device was planned for and why.

    `batch_invariant=True` (opt-in) also makes an example's output the same
    bits alone as inside a batch of any size, where tfdet knows how on this
    CPU: tf.linalg.matmul (and tf.matmul, Keras Dense) multiplies every row in
    a fixed 8-row block (about 1.2-1.3x the stock product's time). The line
    patch() prints says what it replaced; status() lists the ops it cannot
    make batch-invariant and why. On a GPU plan it replaces nothing and warns.

    TensorFlow's own determinism errors are kept. `on_unsupported="warn"`
    (an explicit opt-in) sets TF's per-op escape hatches that the catalogue
    lists for this TF and device (switches whose role is silences_errors), so
    those ops run nondeterministically instead of raising, and tfdet warns by
    name when they are used.
    """
    with _lock:
        current = _acquire(seed, strict, catalogue, environ, quiet, on_unsupported, stacklevel=3, device=device,
                           batch_invariant=batch_invariant)
        _state["explicit"] = True
        return current


DEVICES = ("cpu", "gpu")
DEVICE_ENV = "TFDET_DEVICE"


def choose_device(tf, device, environ):
    """(device, why) the plan is made for: `device` given, else TFDET_DEVICE, else what TF sees."""
    if device is not None:
        why = "given: patch(device=%r)" % device
    elif environ.get(DEVICE_ENV, ""):
        device = environ[DEVICE_ENV].strip().lower()
        why = "from %s=%s" % (DEVICE_ENV, environ[DEVICE_ENV])
    else:
        device = detect_device(tf) if tf is not None else "cpu"
        why = "detected (TensorFlow sees %s)" % ("a GPU" if device == "gpu" else "no GPU")
        return device, why
    device = str(device).lower()
    if device not in DEVICES:
        raise ValueError("device must be one of %s, not %r (%s)" % (", ".join(DEVICES), device, why))
    return device, why


def _acquire(seed, strict, catalogue, environ, quiet, on_unsupported, stacklevel, device=None,
             batch_invariant=False):
    """Patch unless patched (under _lock); the caller records who holds it.
    stacklevel: where the user's line is, seen from a warning issued here."""
    if strict and on_unsupported != "raise":
        raise ValueError("strict=True and on_unsupported=%r contradict each other" % on_unsupported)
    if _state["applied"] is not None:
        applied = _state["applied"]
        if device is not None and str(device).lower() != applied.plan.device:
            warnings.warn("tfdet.patch(device=%r): already patched for %s; unpatch() first to change the plan"
                          % (device, applied.plan.device), TfdetWarning, stacklevel=stacklevel)
        if strict and not applied.strict:  # the watcher is already built: say so rather than ignore it
            warnings.warn("tfdet.patch(strict=True): already patched without strict; unpatch() first to patch "
                          "strictly", TfdetWarning, stacklevel=stacklevel)
        if bool(batch_invariant) != applied.batch_invariant and batch_invariant:
            warnings.warn("tfdet.patch(batch_invariant=True): already patched without it; unpatch() first",
                          TfdetWarning, stacklevel=stacklevel)
        if seed is not None and seed != applied.seed:
            applied.seeded = apply_.seed_all(_tf(), seed)
            applied.seed = seed
        return status()
    catalogue = _catalogue(catalogue)
    environ = os.environ if environ is None else environ
    tf = _tf()
    device, device_why = choose_device(tf, device, environ)
    plan = plan_patch(catalogue, tf.__version__, device, registry.names(), seeded=seed is not None,
                      on_unsupported=on_unsupported)
    applied = apply_.Applied(plan, seed, strict, environ)
    applied.device_why = device_why
    applied.batch_invariant = bool(batch_invariant)
    applied.raw_not_replaced = raw_calls_not_replaced(catalogue, plan)
    if not plan.supported:  # nothing is changed: status().patched stays False
        applied.warnings.append(plan.note)
        _state["applied"] = applied
        _warn(applied.warnings, stacklevel)
        return status()
    if plan.note:
        applied.warnings.append(plan.note)
    watchable = watch.callbacks_supported(tf.__version__)
    if not watchable and plan.remaining:
        message = _summary_of_remaining(plan)
        if strict:
            raise TfdetError(message)
        applied.warnings.append(message)
    late = apply_.context_started()
    try:
        apply_.apply(tf, plan, applied, environ, late, functools.partial(_bind_later_imports, applied))
        if watchable:
            applied.watcher = watch.Watcher(plan, functools.partial(_on_use, strict))
            watch.add(applied.watcher)
    except Exception:
        apply_.undo(applied)
        raise
    _state["applied"] = applied
    current = status()
    if not quiet:
        sys.stderr.write(current.summary_line() + "\n")
    _warn(applied.warnings, stacklevel)
    if plan.silenced:  # never silently, not even with quiet=True
        warnings.warn("tfdet.patch(on_unsupported='warn'): set %s: the ops TF would refuse under determinism "
                      "run nondeterministically instead; each warns by name when used" % ", ".join(
                          "%s=%s" % (s.name, s.value) for s in plan.silenced), TfdetWarning, stacklevel=stacklevel)
    return current


def raw_calls_not_replaced(catalogue, plan):
    """[(tf.raw_ops call, public API)]: for every source the plan replaces, the raw ops a direct call
    would run with the stock kernel. A rebinding reaches the public functions only; a gradient
    replacement reaches the forward op whoever creates it, but not its raw backward ops."""
    replaced = {entry_id for ids in plan.replacements.values() for entry_id in ids}
    calls = {}
    for entry in catalogue:
        if entry.id not in replaced:
            continue
        public = next((api for api in entry.apis if not api.startswith("tf.raw_ops.")), "the public API")
        raw = [api for api in entry.apis if api.startswith("tf.raw_ops.")]
        if entry.direction != "gradient":
            raw.extend("tf.raw_ops." + op for op in entry.raw_ops)
        for call in raw:
            calls.setdefault(call, public)
    return sorted(calls.items())


def _warn(texts, stacklevel):
    for text in texts:
        warnings.warn("tfdet.patch(): " + text, TfdetWarning, stacklevel=stacklevel + 1)


def _catalogue(catalogue):
    """The Catalogue to plan from: given, loaded from a user's path, or the
    shipped one. A broken one is a TfdetError whose message names file:line."""
    from ..catalog import CatalogError, default_catalogue, load_user_catalogue

    if catalogue is not None and not isinstance(catalogue, (str, os.PathLike)):
        return catalogue
    try:
        return default_catalogue() if catalogue is None else load_user_catalogue(catalogue)
    except CatalogError as exc:
        problems = [str(p) for p in exc.problems]
        error = TfdetError("invalid catalogue (%d problem%s): %s" % (
            len(problems), "" if len(problems) == 1 else "s", "; ".join(problems)))
    except Exception as exc:  # the shipped files unreadable (a YAML error, a broken install)
        error = TfdetError("invalid catalogue: %s" % _one_line(exc))
    error.__suppress_context__ = True
    raise error


def _one_line(exc):
    """file:line: problem, from a YAML error's mark where it has one."""
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return "%s:%d: %s" % (mark.name, mark.line + 1, getattr(exc, "problem", None) or type(exc).__name__)
    return " ".join(("%s: %s" % (type(exc).__name__, exc)).split())


def _summary_of_remaining(plan):
    return ("TF %s has no op callbacks (they arrived in 2.2), so tfdet cannot tell which of these your program "
            "uses; %d catalogued source%s of nondeterminism remain for TF %s on %s: %s" % (
                plan.tf_version, len(plan.remaining), "" if len(plan.remaining) == 1 else "s", plan.tf_version,
                plan.device, "; ".join("%s (%s)" % (r.entry.id, r.reason) for r in plan.remaining)))


def _on_use(strict, message, site, remaining):
    """A not-covered op was used: warn at the user's line, or raise under strict."""
    if strict:
        raise TfdetError("tfdet.patch(strict=True): %s: %s" % (site or "an unknown place", message))
    filename, _, lineno = (site or "<unknown>:0").rpartition(":")
    warnings.warn_explicit("tfdet: " + message, TfdetWarning, filename, int(lineno or 0),
                           registry={})


def _bind_later_imports(applied, module):
    """keras/tf_keras imported after patch(): rebind and seed it now."""
    with _lock:
        if _state["applied"] is not applied:
            return
        package = module.__name__.split(".")[0]
        more = bindings.rebind_again(applied.changes, (package,))
        applied.changes.extend(more)
        if applied.seed is not None:
            setter = getattr(getattr(module, "utils", None), "set_random_seed", None)
            if setter is not None:
                setter(applied.seed)
                applied.seeded.append(package)


def unpatch():
    """Undo patch(): restore every rebound function, gradient and environment
    variable (in the mapping patch() wrote them to), and turn op determinism
    back off if patch() turned it on. Seeds cannot be un-set. Returns the
    status after undoing.

    Functions are restored for calls and tracing from now on: a tf.function
    traced while patched keeps the replacements in its graph until it is
    traced again (TF caches the graph), and one traced with op determinism on
    keeps that too.

    unpatch() undoes the patch whoever asked for it: called while
    tfdet.deterministic() blocks are open (in any thread) it warns, undoes
    everything now, and those blocks' exits then do nothing.
    """
    with _lock:
        blocks = _state["blocks"]
        if blocks and _state["applied"] is not None:
            warnings.warn("tfdet.unpatch() while %d tfdet.deterministic() block%s open: undone now; the rest of "
                          "%s runs unpatched" % (blocks, " is" if blocks == 1 else "s are", "it" if blocks == 1
                                                 else "them"), TfdetWarning, stacklevel=2)
        _release_all()
        return status()


def _release_all():
    applied = _state["applied"]
    _state.update(applied=None, explicit=False, blocks=0)
    if applied is not None:
        apply_.undo(applied)


def status():
    """What tfdet.patch() has done in this process, and what remains. Printing
    it gives a readable summary. `patched` is True only if something was changed."""
    with _lock:
        applied = _state["applied"]
        if applied is None:
            return Status(patched=False)
        plan = applied.plan
        return Status(
            patched=applied.changed, tf_version=plan.tf_version, device=plan.device,
            device_why=applied.device_why, supported=plan.supported,
            env=dict(plan.env), api_switches=list(applied.api_switches_on), seed=applied.seed,
            seeded=list(applied.seeded), replacements=dict(plan.replacements),
            replaced_places=dict(applied.replaced), replaced_apis=dict(applied.replaced_apis),
            covered=[(c.entry_id, c.how) for c in plan.covered],
            remaining=[(r.verdict.entry.id, r.verdict.status, r.reason) for r in plan.remaining],
            silenced=[sw.name for sw in plan.silenced], switched_on=plan.switches_in_words(applied.api_switches_on),
            watching=_watching(applied),
            seen=list(applied.watcher.hits) if applied.watcher is not None else [],
            warnings=list(applied.warnings), raw_not_replaced=list(getattr(applied, "raw_not_replaced", [])),
            batch_invariant=applied.batch_invariant, batch_invariant_apis=dict(applied.batch_invariant_apis),
            not_batch_invariant=list(registry.NOT_MADE_BATCH_INVARIANT) if applied.batch_invariant else [])


def _watching(applied):
    if applied.watcher is not None:
        return "op callback on %d op type%s of not-covered entries (%s on first use)" % (
            len(applied.plan.watched_ops()), "" if len(applied.plan.watched_ops()) == 1 else "s",
            "raise" if applied.strict else "warn")
    if applied.plan.remaining and applied.plan.supported:
        return "nothing: this TF has no op callbacks (TF 2.2+), so not-covered sources were named at patch time"
    return ""


@contextlib.contextmanager
def deterministic(seed=None, strict=False, quiet=False, catalogue=None, environ=None, on_unsupported="raise",
                  device=None, batch_invariant=False):
    """Patch for the duration of a with-block; yields status().

    Blocks nest and may run in several threads at once: the patch is applied
    by the first holder and undone when the last block exits, unless patch()
    was called meanwhile (inside a block or in another thread): then it stays
    until unpatch(). Leaving a block never undoes a patch someone else asked
    for. An explicit unpatch() while blocks are open undoes everything (with a
    warning) and their exits do nothing. Options are those of patch(); they
    take effect only where this block is the one that patches (a new seed
    reseeds). What tf.functions traced inside keep afterwards: see unpatch().
    """
    with _lock:
        current = _acquire(seed, strict, catalogue, environ, quiet, on_unsupported, stacklevel=4, device=device,
                           batch_invariant=batch_invariant)
        held = _state["applied"]
        _state["blocks"] += 1
    try:
        yield current
    finally:
        with _lock:
            if held is not None and _state["applied"] is held:  # else unpatch() already undid it
                _state["blocks"] -= 1
                if not _state["blocks"] and not _state["explicit"]:
                    _release_all()
