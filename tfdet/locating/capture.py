"""Record a fingerprint of every op's output while a TensorFlow program runs.

Runs inside the user's process (tfdet/locating/child.py installs it). It is a TF
op callback, the mechanism tfdbg v2 is built on, but it keeps only a 64-bit
fingerprint per output instead of dumping tensors, so two runs can be
compared op by op for about the cost of reading each output once:

- an op executed eagerly is fingerprinted on the host right after it runs;
- an op created inside a tf.function gets a fingerprint op next to it in the
  graph, whose 8 bytes are put on a queue (a FIFOQueue made outside the
  function) with the op's number; when the function call returns, the queue is
  emptied to the host in one transfer. tf.function's automatic control
  dependencies run every stateful op (the enqueues too), so the data flow of
  the user's graph is left untouched. A TF1 graph run by a Session, which no
  function call drains, keeps a tiny numpy_function per output instead;
- an op that changes a variable and has no output (AssignSubVariableOp,
  ResourceScatterAdd, ...) is followed by a read of the variable, whose
  fingerprint stands for the op's effect (slot -1);
- in a tf.function, a gradient op's output is fingerprinted once an op reads
  it (one nothing reads, which grappler prunes, is not made to run), and ops
  that only pass bytes on or read shapes (IMPLIED) are recorded, not hashed;
- in a tf.function, an output whose one reader is elementwise (CHAIN_READERS) is
  recorded, not hashed: it is folded into its reader's fingerprint (chains.py
  says how locate names the op of such a chain that differed).

The trace is JSON Lines, written as the program runs (trace_file.py reads it):
  ["op", graph, name, type, [[graph, name, slot] | null, ...], source, forward, library, apis, outputs]
                                                                          an op traced into a graph; forward: for
                                                                          a gradient op, "ForwardType file:line";
                                                                          library: the Keras line that made it;
                                                                          apis: the public functions tfdet.patch()
                                                                          rebinds that made it (tf.math.bincount)
                                                                          outputs: [dtype, shape] per output
                                                                          (shape null when unknown), which
                                                                          aligns runs of other TF versions
  ["g", graph, name, slot, fingerprint]                                   one execution of a graph op's output
  ["e", type, [input ref or fingerprint, ...], [fingerprint, ...], source, after]
                                                                          one eager op (or function call);
                                                                          after: the variable it wrote, read back
  ["call", function]                                                      a top-level tf.function call ended
  ["save", key, path]                                                     an output saved in full (detail pass;
                                                                          key as in trace_file.py)
  ["start", tf version, device, fingerprint]                              the first record; fingerprint: how the
                                                                          graph outputs were fingerprinted
                                                                          (FINGERPRINT_IDS: farmhash64, sums2)
  ["end", status, detail, stopped_by, seconds]                            the program ended (finished, raised,
                                                                          interrupted); stopped_by: steps, max-bytes;
                                                                          seconds: how long this call took

A process that calls the program several times (repeats) writes one trace per
call; each repeats the "op" records of the graphs traced before, which the
later calls reuse without tracing them again.

An eager input is ["e", index, slot] when a recorded eager op made it, else its own fingerprint.
"""

import collections
import hashlib
import json
import os
import re
import sys
import threading
import weakref

import numpy as np

from ..graph.frames import library_frame, python_stack, user_frame
from ..scanning import replaced_apis

# Ops whose outputs are not worth a fingerprint (control flow TF's callbacks
# cannot instrument, constants, and the debugger's own ops).
SKIPPED = frozenset((
    "Enter", "Exit", "Identity", "If", "LoopCond", "Merge", "NextIteration", "StatelessIf",
    "StatefulPartitionedCall", "PartitionedCall", "Switch", "While", "StatelessWhile", "RemoteCall",
    "DestroyResourceOp", "Const", "NoOp", "Placeholder", "PlaceholderWithDefault", "VarHandleOp",
    "EagerPyFunc", "PyFunc", "Fingerprint", "Bitcast", "DebugIdentityV2", "DebugNumericSummaryV2",
    # an iterator's string handle names its resource, unique to the process (a tf.distribute
    # loop makes one per dataset iteration): an identity, not data
    "IteratorToStringHandle", "MultiDeviceIteratorToStringHandle",
))
# Ops whose outputs their inputs' fingerprints already fix, and which cannot make a
# difference themselves: the bytes they return are their inputs' (a view, a copy), or the
# inputs' shapes. Their "op" records are written (the alignment follows them to their
# inputs, as for an op with no fingerprint) but their outputs are not hashed: on the Keras
# CNN step about a quarter of the outputs, each a few graph nodes per step.
IMPLIED = frozenset((
    "IdentityN", "Snapshot", "StopGradient", "PreventGradient", "EnsureShape", "CheckNumerics", "CheckNumericsV2",
    "Reshape", "ExpandDims", "Squeeze", "Shape", "ShapeN", "Size", "Rank",
))
# Elementwise ops: each output element a function of the input elements at its position (and of a
# broadcast operand), computed alike on every run. An output whose one reader is such an op is not
# hashed (it is *folded*): the reader's output stands for it, as Relu's stands for the Conv2D and
# BiasAdd before it, which grappler can then fuse again. Only outputs of stateless ops the catalogue
# does not know to vary here are folded; which op of a chain differed, locate's detail pass says
# (chains.py) by saving the chain's outputs.
CHAIN_READERS = frozenset((
    "BiasAdd", "Relu", "Relu6", "Elu", "Selu", "LeakyRelu", "Softplus", "Softsign", "Tanh", "Sigmoid",
    "ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "LeakyReluGrad", "SoftplusGrad", "TanhGrad", "SigmoidGrad",
    "Add", "AddV2", "Sub", "Mul", "RealDiv", "Neg", "Square", "Cast",
))
UNHASHABLE = ("resource", "variant")
# Ops that read their inputs' shapes, not their values: reading an output only through them
# does not make it needed (grappler folds a static shape to a constant).
SHAPE_READERS = frozenset(("Shape", "ShapeN", "Size", "Rank"))
_SUFFIX = re.compile(r"_\d+$")


def graph_key(graph):
    """A graph's name without the counter TF appends (stable between runs)."""
    return _SUFFIX.sub("", getattr(graph, "name", "") or "graph")


def function_key(op_type):
    """The function an eager call runs: '__inference_train_function_123' -> 'train_function'."""
    for prefix in ("__inference_", "__forward_", "__backward_"):
        if op_type.startswith(prefix):
            op_type = op_type[len(prefix):]
    return _SUFFIX.sub("", op_type)


def _forward_source():
    """For an op made by a gradient function, '<forward op type> file:line': where the
    user's code made the forward op it differentiates (TF's gradient functions,
    in its *_grad.py files, receive that op as `op`)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.endswith("_grad.py"):
            op = frame.f_locals.get("op")
            try:
                if not hasattr(op, "traceback"):  # the eager tape hands gradient functions a stand-in op
                    op = _forward_op(op)
                frames = [(f.filename, f.lineno) for f in op.traceback]
                source = user_frame(frames)
                return "%s %s" % (op.type, source) if source else None
            except (AttributeError, TypeError):
                return None
        frame = frame.f_back
    return None


def _forward_op(stand_in):
    """The graph op a tape's stand-in (_MockOp: type and inputs, no name) stands for:
    the op of that type that reads all of those inputs."""
    candidates = None
    for tensor in stand_in.inputs:
        if tensor is None:  # an input the gradient does not need is left out
            continue
        consumers = {id(op): op for op in tensor.consumers() if op.type == stand_in.type}
        candidates = consumers if candidates is None else {k: v for k, v in candidates.items() if k in consumers}
    return next(iter(candidates.values())) if candidates else None


def host_fingerprint(array):
    """16 hex digits of a numpy array's dtype, shape and bytes."""
    import numpy as np

    array = np.ascontiguousarray(array)
    digest = hashlib.blake2b(digest_size=8)
    digest.update(("%s%s" % (array.dtype.str, array.shape)).encode())
    if array.dtype.kind == "O":
        for item in array.reshape(-1):
            digest.update(bytes(item))
    else:
        digest.update(array.view(np.uint8).reshape(-1).data if array.size else b"")
    return digest.hexdigest()


# What each method's fingerprints are, as a trace and a fingerprints file name it: two
# runs fingerprinted differently cannot be compared output by output.
FINGERPRINT_IDS = {"fingerprint": "farmhash64", "checksum": "sums2"}

# splitmix64's constants (Steele, Lea, Flood, "Fast splittable pseudorandom number
# generators", OOPSLA 2014), as the signed int64 values TF computes with.
_GOLDEN, _MIX1, _MIX2 = (c - 2 ** 64 for c in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB))


def graph_fingerprint(tensor, method="fingerprint"):
    """A small tensor fingerprinting `tensor`'s bytes, computed in the graph.

    "fingerprint": TF's farmhash over the raw bytes (CPU kernel only);
    "checksum": exact int64 sums that stay on the device (on a GPU no tensor is
    copied to the host; sums_fingerprint says what they see).
    """
    import tensorflow as tf

    if method != "checksum":
        # the bytes only (tf.fingerprint hashes a number's bytes as they are: no bitcast needed);
        # the shape is the same in two runs of one program (the alignment says when not)
        return tf.fingerprint(tf.reshape(tensor, [1, -1]))
    return sums_fingerprint(tensor)


def _wrap(number):
    """A Python integer as the signed 64-bit integer it wraps around to."""
    return (number + 2 ** 63) % 2 ** 64 - 2 ** 63


def _mix(values):
    """splitmix64's finalizer over int64 `values` (wrap-around arithmetic; a logical shift
    is an arithmetic one masked): a pseudo-random odd number per value."""
    import tensorflow as tf

    def shift_xor(x, bits):
        logical = tf.bitwise.bitwise_and(tf.bitwise.right_shift(x, tf.constant(bits, tf.int64)),
                                         tf.constant(2 ** (64 - bits) - 1, tf.int64))
        return tf.bitwise.bitwise_xor(x, logical)

    x = (values + 1) * tf.constant(_GOLDEN, tf.int64)
    x = shift_xor(x, 30) * tf.constant(_MIX1, tf.int64)
    x = shift_xor(x, 27) * tf.constant(_MIX2, tf.int64)
    return tf.bitwise.bitwise_or(shift_xor(x, 31), tf.constant(1, tf.int64))


def words(tensor):
    """The tensor's bytes as int64 numbers of at most 32 bits each (a wider word is split):
    the differences of two such words are below 2**32, so a 64-bit sum keeps them apart."""
    import tensorflow as tf

    dtype = tensor.dtype
    if dtype == tf.string:  # a farmhash per string, as two 32-bit words (strings live on the host)
        tensor, dtype = tf.bitcast(tf.reshape(tf.fingerprint(tf.reshape(tensor, [-1])), [-1, 2, 4]), tf.int32), tf.int32
    elif dtype == tf.bool:
        tensor, dtype = tf.cast(tensor, tf.uint8), tf.uint8
    if dtype.size > 4:  # float64, int64, complex64/128: their 32-bit halves
        tensor = tf.bitcast(tensor, tf.int32)
    elif dtype.is_floating or dtype.is_complex or dtype.is_quantized:  # their bits, as an integer
        tensor = tf.bitcast(tensor, {1: tf.int8, 2: tf.int16, 4: tf.int32}[dtype.size])
    return tf.reshape(tf.cast(tensor, tf.int64), [-1])


def sums_fingerprint(tensor):
    """[S0, S1, shape] (int64, wrap-around): S0 the sum of the words w_i (words()), S1 the
    sum of w_i * m_i with m_i a pseudo-random odd 64-bit number per position (_mix), and a
    weighted sum of the shape and the dtype.

    Integer sums are exact, so the order a device adds in cannot change them. One changed
    bit changes a word by +-2**k (k < 32) and S1 by 2**k * m_i, never 0 mod 2**64 (m_i odd).
    Two different words swapped change S1 by (w_i - w_j)(m_i - m_j): 0 mod 2**64 only when
    2**64 divides it, and |w_i - w_j| < 2**32, so only when 2**33 divides m_i - m_j: about
    one chance in 2**32 per pair. The weights are a function of the position computed in
    the graph; for a static shape grappler's constant folding makes them a constant once.
    """
    import tensorflow as tf

    flat = words(tensor)
    weights = _mix(tf.range(tf.size(flat, out_type=tf.int64), dtype=tf.int64))
    shape = tf.shape(tensor, out_type=tf.int64)
    described = tf.reduce_sum(shape * _mix(tf.range(tf.size(shape, out_type=tf.int64), dtype=tf.int64) + 2 ** 40))
    described += tf.size(shape, out_type=tf.int64) * _MIX1 + _wrap(tensor.dtype.as_datatype_enum * _GOLDEN)
    return tf.stack([tf.reduce_sum(flat), tf.reduce_sum(flat * weights), described])


def _variable_dtype(attrs):
    """The dtype attribute of a variable-writing op, whatever form the callback got it in
    (an enum number when eager, an AttrValue proto when traced)."""
    import tensorflow as tf

    for index in range(0, len(attrs or ()) - 1, 2):
        if attrs[index] in ("dtype", "T"):
            value = attrs[index + 1]
            return tf.as_dtype(getattr(value, "type", value))
    return None


def _dtype_shape(tensor):
    """[dtype, static shape] of a traced output (a dimension unknown at trace time is null)."""
    shape = tensor.shape
    return [tensor.dtype.name, shape.as_list() if shape.rank is not None else None]


def _is_function_call(op_type):
    return op_type.startswith(("__inference_", "__forward_", "__backward_"))


def _mutates_variable(op_type, inputs, outputs):
    """An op that writes a variable and returns nothing: its effect is read back."""
    return (not outputs and inputs and getattr(inputs[0], "dtype", None) is not None
            and inputs[0].dtype.name == "resource"
            and op_type.startswith(("Assign", "ResourceScatter", "ResourceApply", "ResourceSparseApply",
                                    "ResourceStridedSliceAssign")))


class Recorder:
    """The op callback and the trace it writes. One per process."""

    def __init__(self, path, steps=None, max_bytes=None, save=(), save_dir=None, method=None, every_output=False,
                 fold=True):
        self.path = path
        self.steps = steps
        self.max_bytes = max_bytes
        self.save = {tuple(ref) for ref in save}  # graph refs (graph, name, slot) or eager (index, slot)
        self.save_dir = save_dir
        import tensorflow as tf

        self.device = "gpu" if tf.config.list_logical_devices("GPU") else "cpu"
        # on a GPU, sums computed on the device: no output is copied to the host to be fingerprinted
        self.method = method or ("checksum" if self.device == "gpu" else "fingerprint")
        self.tf_version = tf.__version__
        # every_output: hash every output as it is made, IMPLIED ops' and unread ones too (as capture did
        # before; the benchmark measures what leaving them out saves)
        self.every_output = every_output
        self._implied = frozenset() if every_output else IMPLIED
        self.defer_gradients = not every_output  # off where TF has no hook to see every reader (install)
        # fold: an output whose one reader is elementwise (CHAIN_READERS) is not hashed; off for a
        # --record file, which no detail pass follows, and for every_output
        self.fold = fold and not every_output
        self._varying = None  # op types the catalogue says may vary on this TF and device (never folded)
        self.write_error = None  # the OSError that stopped the trace (file too large, disk full), as text
        self._lock = threading.Lock()
        self._own = threading.local()  # .active while the recorder runs an op of its own (a read-back)
        self._op_records = {}  # (graph, op name) -> its "op" record: a repeat's trace repeats them (graphs are reused)
        self._pending = collections.deque()  # (graph ref, fingerprint hex) from the graphs, not yet written
        self._line_starts = {}  # graph ref -> its "g" record's text up to the fingerprint (made once per ref)
        # id of an eager input no recorded op made (a constant a function captures, passed at every
        # call) -> (weak reference to it, its fingerprint); EagerTensors are immutable
        self._input_hashes = collections.OrderedDict()
        self._queue = None  # the FIFOQueue graph fingerprints go to: (ref number, bytes), drained per call
        self._queued_refs = []  # ref number -> graph ref (graph, op name, slot)
        # graph -> {(op name, slot): graph ref} of outputs traced but not read by an op yet (_consumed);
        # no tensor kept, which would keep its graph alive
        self._waiting = weakref.WeakKeyDictionary()
        self._stock = None  # replaced_apis.stock_functions, once
        self.repeat = -1
        self._file = None
        self._begin(path)

    def _begin(self, path):
        """Start the trace of one call of the program (caller holds no lock)."""
        self.stopped_by = "write-failed" if self.write_error else None
        self.path = path
        self.repeat += 1
        self._written = 0
        self._eager_index = 0
        self._calls = {}
        self._produced = {}  # id of an eager tensor -> (weak reference to it, eager index, slot)
        self._occurrences = {}  # graph ref -> outputs produced so far (to save one occurrence)
        try:
            self._file = open(path, "w", encoding="utf-8")
        except OSError as error:
            self._failed(error)
            return
        self._write(["start", self.tf_version, self.device, FINGERPRINT_IDS[self.method]])
        for record in list(self._op_records.values()):
            self._write(record)

    def restart(self, path, status, detail="", seconds=None):
        """End this call's trace (as close does) and begin the next call's in `path`: a
        repeat in the same process is compared as a run of its own."""
        self.close(status, detail, seconds)
        self._drain(keep=False)
        self._pending.clear()  # a stray fingerprint from a thread of the last call belongs to no call
        self._begin(path)

    def _failed(self, error):
        """A trace that cannot be written stops capture; the process says so as it ends."""
        self.write_error = "%s: %s" % (getattr(error, "filename", None) or self.path,
                                       error.strerror or error)
        self.stopped_by = "write-failed"
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
        self._file = None

    # -- writing -----------------------------------------------------------
    def _flush_pending(self):
        """Write the graph outputs fingerprinted since the last record (caller holds the lock)."""
        starts = self._line_starts
        lines = []
        while self._pending:  # TF's threads may append meanwhile: popleft takes each entry once
            ref, fingerprint = self._pending.popleft()
            start = starts.get(ref)
            if start is None:  # the text json.dumps(["g", graph, name, slot, hex]) writes, up to the hex
                start = starts[ref] = json.dumps(["g", ref[0], ref[1], ref[2], ""], separators=(",", ":"))[:-3]
            lines.append('%s"%s"]\n' % (start, fingerprint))
        if lines:
            text = "".join(lines)
            self._file.write(text)
            self._written += len(text)

    def _write(self, record, flush=False):
        line = json.dumps(record, separators=(",", ":")) + "\n"
        with self._lock:
            if self._file is None:
                return
            try:
                self._flush_pending()
                self._file.write(line)
                if flush:
                    self._file.flush()
            except OSError as error:
                self._failed(error)
                return
            self._written += len(line)
            if self.max_bytes and self._written >= self.max_bytes and not self.stopped_by:
                self.stopped_by = "max-bytes"

    @property
    def capturing(self):
        return self.stopped_by is None

    def close(self, status, detail="", seconds=None):
        self._drain()
        with self._lock:
            if self._file is None:
                return
            try:
                self._flush_pending()
                self._file.write(json.dumps(["end", status, detail, self.stopped_by, seconds]) + "\n")
                self._file.close()
            except OSError as error:
                self._failed(error)
            self._file = None

    # -- the callback --------------------------------------------------------
    def __call__(self, op_type, inputs, attrs, outputs, op_name=None, graph=None):
        # Returns the outputs unchanged, never None: TF hands each callback what the
        # one before returned, and a None would blind the callbacks after this one.
        op_type = op_type.decode() if isinstance(op_type, bytes) else str(op_type)
        if self.capturing and not getattr(self._own, "active", False):
            if graph is not None:
                self._consumed(op_type, inputs, graph, op_name)
                self._traced(op_type, inputs, attrs, outputs, op_name, graph)
            else:
                self._eager(op_type, inputs, attrs, outputs)
        return outputs

    def _stock_functions(self):
        """The stock functions tfdet.patch() rebinds, by (file, name): which of them made an op."""
        if self._stock is None:
            import tensorflow as tf

            self._stock = replaced_apis.stock_functions(tf)
        return self._stock

    def _save_array(self, key, array):
        """Save one output in full; key: its execution key (see trace_file.py)."""
        import numpy as np

        name = "r%d-" % self.repeat + "-".join(str(part).replace("/", "_") for part in key) + ".npy"
        path = os.path.join(self.save_dir, name)
        try:
            np.save(path, array)
        except OSError as error:
            with self._lock:
                self._failed(error)
            return
        self._write(["save", list(key), path])

    def _eager(self, op_type, inputs, attrs, outputs):
        if op_type in SKIPPED:
            return
        index = self._eager_index
        self._eager_index += 1
        if _is_function_call(op_type):
            self._drain()  # the call's graph fingerprints come before its own record, as they ran before it
        refs = []
        for tensor in inputs or ():
            made = self._produced.get(id(tensor))
            if made is not None and made[0]() is tensor:  # an id outlives its tensor: a new one may reuse it
                refs.append(["e", made[1], made[2]])
            else:
                refs.append(self._hash_input(tensor) if _is_function_call(op_type) else self._hash_eager(tensor))
        hashes = []
        for slot, tensor in enumerate(outputs or ()):
            hashes.append(self._hash_eager(tensor, (index, slot)))
            self._produced[id(tensor)] = (_weak(tensor), index, slot)
        after = None
        if _mutates_variable(op_type, inputs, outputs):
            after = self._read_back_eager(inputs[0], attrs, (index, -1))
        if len(self._produced) > 100000:  # ids of dead tensors get reused: forget old ones
            self._produced.clear()
        self._write(["e", op_type, refs, hashes, user_frame(python_stack()), after])
        if _is_function_call(op_type):
            name = function_key(op_type)
            self._calls[name] = self._calls.get(name, 0) + 1
            self._write(["call", name], flush=True)  # a run killed later still leaves every finished step
            if self.steps and self._calls[name] >= self.steps:
                self.stopped_by = "steps"

    def _hash_eager(self, tensor, ref=None):
        if getattr(tensor, "dtype", None) is None or tensor.dtype.name in UNHASHABLE:
            return None
        try:
            array = tensor.numpy()
        except Exception:  # a tensor that cannot come to the host (e.g. a remote one)
            return None
        if ref is not None and ref in self.save:
            self._save_array(("e",) + tuple(ref), array)
        return host_fingerprint(array)

    def _hash_input(self, tensor, cached=64):
        """A function call's input that no recorded op made: usually a tensor the function
        captured, the same object at every call (a Keras step's batch constant, a table), so
        its fingerprint is kept while the tensor is (the last `cached` of them)."""
        key = id(tensor)
        entry = self._input_hashes.get(key)
        if entry is not None and entry[0]() is tensor:
            self._input_hashes.move_to_end(key)
            return entry[1]
        fingerprint = self._hash_eager(tensor)
        if getattr(tensor, "dtype", None) is not None and tensor.dtype.name not in UNHASHABLE:
            self._input_hashes[key] = (_weak(tensor), fingerprint)
            if len(self._input_hashes) > cached:
                self._input_hashes.popitem(last=False)
        return fingerprint

    def _read_back_eager(self, handle, attrs, ref):
        import tensorflow as tf

        dtype = _variable_dtype(attrs)
        if dtype is None:
            return None
        # TF calls the callback for this eager read too: not the program's op, so not recorded
        # (recorded, it came before the write it reads and was blamed for the write's difference)
        self._own.active = True
        try:
            value = tf.raw_ops.ReadVariableOp(resource=handle, dtype=dtype)
        finally:
            self._own.active = False
        return self._hash_eager(value, ref)

    def _traced(self, op_type, inputs, attrs, outputs, op_name, graph):
        import tensorflow as tf

        key = graph_key(graph)
        if op_type in SKIPPED or _is_dataset_function(graph) or _is_xla(graph):
            return
        input_refs = [[graph_key(t.graph), t.op.name, t.value_index] for t in inputs or ()]
        try:
            stack = list(graph.get_operation_by_name(op_name).traceback)
        except (KeyError, ValueError, AttributeError, TypeError):
            stack = []
        frames = [(f.filename, f.lineno) for f in stack]
        record = ["op", key, op_name, op_type, input_refs, user_frame(frames), _forward_source(),
                  library_frame(stack), sorted(replaced_apis.through(stack, self._stock_functions())),
                  [_dtype_shape(t) for t in outputs or ()]]
        self._op_records[(key, op_name)] = record
        self._write(record)
        if _in_loop_gradient(graph):
            return  # recorded, not fingerprinted: the loop gradient's outputs are, where the loop returns
        if op_type in self._implied:
            return
        targets = [(slot, tensor) for slot, tensor in enumerate(outputs or ())
                   if tensor.dtype.name not in UNHASHABLE]
        if _mutates_variable(op_type, inputs, outputs):
            dtype = _variable_dtype(attrs)
            if dtype is not None:
                with tf.control_dependencies([graph.get_operation_by_name(op_name)]):
                    targets.append((-1, tf.raw_ops.ReadVariableOp(resource=inputs[0], dtype=dtype)))
        # a gradient op's output waits for a reader (the tape differentiates every input of an op, and
        # grappler prunes the gradients nothing uses), and so does a foldable one (its readers decide);
        # any other op's is hashed as it is made
        foldable = _defers(graph) and self.defer_gradients and self._foldable(op_type, graph, op_name)
        deferred = (record[6] is not None or foldable) and _defers(graph) and self.defer_gradients
        waiting = None
        if deferred:
            waiting = self._waiting.get(graph)
            if waiting is None:  # ops made from here on are scanned for readers (_made_since)
                waiting = self._waiting[graph] = {None: _op_id(graph, op_name)}
        for slot, tensor in targets:
            ref = (key, op_name, slot)
            if waiting is not None and slot >= 0 and ref not in self.save:
                # the reader hands the tensor back; [ref, foldable, the one elementwise reader so far]
                waiting[(op_name, slot)] = [ref, foldable, None]
            else:  # a variable's write runs in every call: its read-back is hashed at once
                self._hash_traced(tensor, ref)

    def _foldable(self, op_type, graph, op_name):
        """Whether the op's outputs may be folded into an elementwise reader's: a stateless op
        (a random op, an iterator, a read depend on more than their inputs) that the catalogue
        does not say may vary on this TF and device."""
        if not self.fold or op_type in _NEVER_FOLDED:
            return False
        if self._varying is None:
            self._varying = _varying_op_types(self.tf_version, self.device)
        if self._varying is False or op_type in self._varying:
            return False
        try:
            return not graph.get_operation_by_name(op_name).op_def.is_stateful
        except (AttributeError, KeyError, ValueError, TypeError):
            return False

    def _consumed(self, op_type, inputs, graph, op_name):
        """Hash the outputs an op being traced reads, the first time one reads them. An output
        nothing reads is left unhashed, so an op nothing needs (the gradient of a model's input,
        which the tape computes and grappler's pruning removes) is not made to run for it."""
        waiting = self._waiting.get(graph)
        if not waiting:
            return
        # the readers: this op, and the ops made since the last callback in this graph without one
        # (a nested tf.function's call op is made by graph.create_op, which calls no callback)
        readers = [] if op_type in SHAPE_READERS else [(op_name, op_type, inputs or ())]
        readers.extend((op.name, op.type, op.inputs) for op in _made_since(graph, waiting, op_name)
                       if op.type not in SHAPE_READERS)
        for reader, reader_type, tensors in readers:
            for tensor in tensors:
                tensor_ref = None if tensor.graph is not graph else _take(waiting, tensor, reader, reader_type)
                if tensor_ref is not None:
                    import tensorflow as tf

                    # as if made beside the op that made it: its device, none of the reader's control inputs
                    with tf.control_dependencies(None), tf.device(tensor.op.device or None):
                        self._hash_traced(tensor, tensor_ref)

    def _hash_traced(self, tensor, ref):
        """The ops that hash `tensor` (and save it, when asked) into the trace as `ref`."""
        made = [self._emit(tensor, ref, full=True)] if ref in self.save else []
        return made + [self._emit(graph_fingerprint(tensor, self.method), ref)]

    def read_silently(self, op):
        """`op` (made without a callback, as a nested tf.function's call) reads outputs still
        waiting: hash them now and make `op` wait for their hashes. Called while TF adds a
        function's automatic control dependencies (_SilentReaders), when no callback may follow."""
        waiting = self._waiting.get(op.graph)
        if not waiting or op.type in SHAPE_READERS or not self.capturing:
            return
        import tensorflow as tf

        for tensor in op.inputs:
            ref = _take(waiting, tensor, op.name, None)  # a silent reader is never an elementwise one
            if ref is None:
                continue
            self._own.active = True  # the hashes' own ops are not the program's
            try:
                with tf.control_dependencies(None), tf.device(tensor.op.device or None):
                    made = self._hash_traced(tensor, ref)
            finally:
                self._own.active = False
            op._add_control_inputs([m for m in made if m is not None])  # noqa: SLF001 (it runs: they run first)

    def _emit(self, value, ref, full=False):
        import tensorflow as tf

        if not full and tf.compat.v1.executing_eagerly_outside_functions():
            return self._enqueue(value, ref)
        pending = self._pending

        def record(array):  # runs inside the graph, on TF's threads: keep it short
            if self.capturing:
                if full:
                    occurrence = self._occurrences.get(ref, 0)
                    self._occurrences[ref] = occurrence + 1
                    self._save_array(("g",) + tuple(ref) + (occurrence,), array)
                else:
                    pending.append((ref, array.tobytes().hex()))  # written with the next record
            return np.int32(0)

        # numpy_function, not py_function: the fingerprint arrives as a numpy array, no EagerTensor made
        return tf.numpy_function(record, [value], Tout=tf.int32, stateful=True, name="tfdet_locate").op

    def _enqueue(self, fingerprint, ref):
        """Put (ref number, fingerprint bytes) on the recorder's queue, in the graph being traced."""
        import tensorflow as tf

        # fingerprint: uint8 [1, 8]; checksum: int64 [3], as its bytes [3, 8]
        data = fingerprint if fingerprint.dtype == tf.uint8 else tf.bitcast(fingerprint, tf.uint8)
        if self._queue is None:
            own = getattr(self._own, "active", False)
            self._own.active = True  # the queue's creation is not the program's op
            try:
                with tf.init_scope(), tf.device("/cpu:0"):  # made eagerly, outside every function; no size limit
                    self._queue = tf.queue.FIFOQueue(-1, [tf.int64, tf.uint8], shapes=[[], data.shape],
                                                     name="tfdet_locate_fingerprints")
            finally:
                self._own.active = own
        self._queued_refs.append(ref)
        return self._queue.enqueue([tf.constant(len(self._queued_refs) - 1, tf.int64), data], name="tfdet_locate")

    def _drain(self, keep=True):
        """Move what the graphs put on the queue to the records pending (one transfer to the host)."""
        if self._queue is None:
            return
        self._own.active = True  # the queue's own eager ops are not the program's
        try:
            waiting = int(self._queue.size())
            if not waiting:
                return
            numbers, fingerprints = self._queue.dequeue_many(waiting)
        finally:
            self._own.active = False
        if keep and self.capturing:
            refs = self._queued_refs
            rows = fingerprints.numpy()
            text, width = rows.tobytes().hex(), 2 * rows[0].nbytes  # one hex string, cut per row
            self._pending.extend((refs[n], text[i * width:(i + 1) * width])
                                 for i, n in enumerate(numbers.numpy().tolist()))


def _take(waiting, tensor, reader, reader_type):
    """The ref of a waiting output that `reader` (an op name, of type reader_type) reads, to hash
    now; None when the output is not waiting or stays waiting folded: its first reader is
    elementwise (or that same reader again, as x * x reads x twice)."""
    key = (tensor.op.name, tensor.value_index)
    entry = waiting.get(key)
    if entry is None:
        return None
    ref, foldable, folded_into = entry
    if folded_into == reader:
        return None
    if foldable and folded_into is None and reader_type in CHAIN_READERS:
        entry[2] = reader
        return None
    del waiting[key]
    return ref


# Ops never folded: their outputs are where data comes in or a variable's value is read
_NEVER_FOLDED = frozenset(("ReadVariableOp", "IteratorGetNext", "IteratorGetNextSync", "OptionalGetValue"))


def _varying_op_types(tf_version, device):
    """The raw op types the catalogue says may vary on this TF version and device (False when
    the catalogue cannot answer: then nothing is folded)."""
    import warnings

    try:
        from ..catalog import default_catalogue

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a TF newer than the catalogue: answered by its newest release
            verdicts = default_catalogue().affecting(tf_version, device)
    except Exception:  # noqa: BLE001 (an uncovered TF, an unreadable catalogue: fold nothing)
        return False
    return frozenset(op for verdict in verdicts for op in verdict.entry.raw_ops)


def _in_loop_gradient(graph):
    """Whether the graph is (or is inside) the body of a while loop's gradient, where no op may be
    added: a captured queue handle fails the whole gradient in TF's while_v2 ("... is in list of
    internal_captures but not in internal_capture_to_output"), and a numpy_function there makes its
    cond graph take one input too many ("cond_graph takes 29 inputs; Expected: 28"); both on a
    Keras LSTM trained under a tape in the corpus's timeseries_lstm."""
    while graph is not None:
        if type(graph).__name__ in ("_WhileBodyGradFuncGraph", "WhileCondFuncGraph"):
            return True
        graph = getattr(graph, "outer_graph", None)
    return False


def _dead():
    return None


def _weak(tensor):
    """A weak reference to a tensor (or, for an object that has none, one that is always dead)."""
    try:
        return weakref.ref(tensor)
    except TypeError:
        return _dead


def _op_id(graph, op_name):
    try:
        return graph.get_operation_by_name(op_name)._id  # noqa: SLF001
    except (AttributeError, KeyError, ValueError, TypeError):
        return 0


def _made_since(graph, waiting, op_name):
    """The ops made in `graph` since the last call, up to the op `op_name` being traced (op ids
    count up; the last id seen is kept in `waiting` under None)."""
    try:
        nodes, last = graph._nodes_by_id, graph.get_operation_by_name(op_name)._id  # noqa: SLF001 (no public API)
    except (AttributeError, KeyError, ValueError, TypeError):  # TypeError: an op the callback gets no name of
        return []
    first = waiting.get(None, last)
    waiting[None] = max(first, last)
    return [nodes[i] for i in range(first + 1, last + 1) if i in nodes]


def _defers(graph):
    """Whether the outputs of ops traced into `graph` wait for a reader before they are hashed:
    in a tf.function's graph (every op a call needs runs); a TF1 graph a Session runs keeps
    hashing every output as it is made."""
    return bool(getattr(graph, "building_function", False))


def _is_dataset_function(graph):
    # tf.data traces its functions in graphs it names after the dataset op; they
    # run on tf.data's threads, where a per-op order between runs means nothing.
    name = getattr(graph, "name", "") or ""
    return "Dataset" in name or "dataset" in name


def _is_xla(graph):
    """A graph XLA compiles (jit_compile=True, or inside one): no fingerprint op compiles there."""
    from tensorflow.python.ops import control_flow_util

    try:
        return control_flow_util.GraphOrParentsInXlaContext(graph)
    except AttributeError:
        return False


_INSTALLED = weakref.WeakSet()  # the recorders installed: _silent_readers hands them each op
_SILENT_READERS = []  # [True] once _silent_readers is registered, [False] if this TF cannot


def _silent_readers(op, reads, writes):
    """An ACD resource resolver (TF calls one for every op of a function as it adds the function's
    automatic control dependencies, after the last op is made): the point where an op made
    without a callback can still be seen. Changes no resource set."""
    for recorder in list(_INSTALLED):
        recorder.read_silently(op)
    return False


def _register_silent_readers():
    if not _SILENT_READERS:
        try:
            from tensorflow.python.framework import auto_control_deps

            auto_control_deps.register_acd_resource_resolver(_silent_readers)
            _SILENT_READERS.append(True)
        except (ImportError, AttributeError, KeyError):  # a TF without the hook: every output hashed when made
            _SILENT_READERS.append(False)
    return _SILENT_READERS[0]


def install(recorder):
    """Register the recorder as this thread's op callback."""
    from tensorflow.python.framework import op_callbacks

    if not _register_silent_readers():
        recorder.defer_gradients = False
    _INSTALLED.add(recorder)
    op_callbacks.add_op_callback(recorder)


def uninstall(recorder):
    from tensorflow.python.framework import op_callbacks

    _INSTALLED.discard(recorder)
    try:
        op_callbacks.remove_op_callback(recorder)
    except KeyError:
        pass
