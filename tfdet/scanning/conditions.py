"""Catalogue conditions a graph can answer. Pure, over GraphDef protos.

Most catalogue entries hold only under a condition (an unseeded random op, a
parallel map with a stateful function, a loop with parallel iterations...).
Where the op's own attributes or constant inputs settle it, the scan does
not count an entry whose condition the op provably does not meet. Each rule
returns True (met), False (provably not met) or None (the graph cannot tell:
counted, to be safe).

Which entry a check applies to is the catalogue's fact (an entry's `scan: check:`),
as are the stateful random ops (the raw ops of the op_seed entries) and the
entries about XLA (`requires: [xla]`): CatalogueChecks reads them from the
entries, so no entry id is written here.
"""

from ..graph.frames import path_of


def _attr(node, name, kind):
    if name not in node.attr:
        return None
    return getattr(node.attr[name], kind)


def _const_int(index, name):
    """The integer value of the Const node `name` (an input such as 'seed:0'), or None."""
    node = index.get(name.split(":")[0].lstrip("^"))
    if node is None or node.op != "Const":
        return None
    tensor = node.attr["value"].tensor
    values = list(tensor.int64_val) or list(tensor.int_val)
    return values[0] if len(values) == 1 else None


def unseeded(node, index, library, stateful_random):
    seed, seed2 = _attr(node, "seed", "i"), _attr(node, "seed2", "i")
    if seed is None and seed2 is None:
        return None
    return not seed and not seed2


def parallel_loop(node, index, library, stateful_random):
    """parallel_iterations > 1 and stateful ops (random ops, variable writes) in the body."""
    value = _attr(node, "parallel_iterations", "i")
    if value is not None and value <= 1:
        return False
    if node.op == "StatelessWhile":  # TF makes a loop stateless only when no op of its body is stateful
        return False
    body = node.attr["body"].func.name if node.op == "While" and "body" in node.attr else None
    if body:  # a TF2 loop: its body function answers (an LSTM's reads its weights, writes nothing)
        state = _advances_state(body, library, {body}, stateful_random)
        if state is False:
            return False
        if state and value is not None:
            return True
        return None
    return None if value is None else value > 1


def _options_nondeterministic(index):
    """True if an OptionsDataset in the graph turns deterministic order off."""
    try:
        from tensorflow.core.framework import dataset_options_pb2
    except ImportError:
        return None
    for node in index.values():
        if node.op == "OptionsDataset" and "serialized_options" in node.attr:
            options = dataset_options_pb2.Options()
            options.ParseFromString(node.attr["serialized_options"].s)
            if options.HasField("deterministic") and not options.deterministic:
                return True
    return False


def nondeterministic_order(node, index, library, stateful_random):
    value = _attr(node, "deterministic", "s")
    if value is None:
        return None
    value = value.decode() if isinstance(value, bytes) else value
    if value == "false":
        return True
    if value == "true":
        return False
    return _options_nondeterministic(index)  # "default": the pipeline's Options decide (deterministic unless set)


def unseeded_shuffle(node, index, library, stateful_random):
    if node.op in ("ShuffleDataset", "ShuffleDatasetV2", "ShuffleDatasetV3") and len(node.input) >= 4:
        seeds = [_const_int(index, name) for name in node.input[2:4]]
        if node.op == "ShuffleDatasetV2":  # (input, buffer_size, seed_generator): the generator decides
            return None
        if None in seeds:
            return None
        return not any(seeds)
    return None


# State a map function advances as it runs, besides the stateful random ops: TF's
# stateful generators (tf.random.Generator) and variable writes, such as the seed
# state Keras 3's random layers (RandomFlip, RandomRotation...) keep in a variable and
# feed to stateless random ops: each call reads and bumps it, so parallel calls take
# the seeds in a varying order.
STATE_WRITES = ("AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp", "Assign", "AssignAdd", "AssignSub",
                "RngReadAndSkip", "RngSkip", "StatefulUniform", "StatefulUniformInt", "StatefulUniformFullInt",
                "StatefulStandardNormal", "StatefulStandardNormalV2", "StatefulTruncatedNormal",
                "StatefulRandomBinomial")


def _advances_state(function, library, seen, stateful_random):
    """True if `function` (or a function it calls) holds a stateful random op or writes
    state, False if provably not, None if a called function is not in the library."""
    body = library.get(function)
    if body is None:
        return None
    answer = False
    for inner in body.node_def:
        if inner.op in stateful_random or inner.op in STATE_WRITES:
            return True
        called = [value.func.name for value in inner.attr.values() if value.func.name]
        called += [inner.op] if inner.op in library else []
        for name in called:
            if name in seen:
                continue
            seen.add(name)
            found = _advances_state(name, library, seen, stateful_random)
            if found:
                return True
            if found is None:
                answer = None
    return answer


def stateful_parallel_map(node, index, library, stateful_random):
    function = node.attr["f"].func.name if "f" in node.attr else None
    if library.get(function) is None:
        return None
    calls = [_const_int(index, name) for name in node.input[1:]]
    parallel = [c for c in calls if c is not None]
    if parallel and all(c == 1 for c in parallel):
        return False
    return _advances_state(function, library, {function}, stateful_random)


# The catalogue's `scan: check:` names (schema.json's enum) and what each runs.
CHECKS = {
    "op_seed": unseeded,
    "parallel_iterations": parallel_loop,
    "dataset_order": nondeterministic_order,
    "shuffle_seed": unseeded_shuffle,
    "stateful_map": stateful_parallel_map,
}


class CatalogueChecks(object):
    """What the scan reads from a catalogue's entries, once per scan: the check
    each entry names, the stateful random ops (the raw ops of the op_seed
    entries), the entries about XLA (requires: [xla]) and those about calling
    tf.raw_ops.X directly (scan: raw_ops_only). A check name the code does not
    have raises ValueError: a check is never left out silently."""

    def __init__(self, catalogue):
        self.rules = {}
        for entry in catalogue:
            name = entry.scan.check
            if name is None:
                continue
            if name not in CHECKS:
                raise ValueError("catalogue entry %r names the scan check %r, which tfdet does not have (it has: %s)"
                                 % (entry.id, name, ", ".join(sorted(CHECKS))))
            self.rules[entry.id] = CHECKS[name]
        self.stateful_random = frozenset(op for entry in catalogue if entry.scan.check == "op_seed"
                                         for op in entry.raw_ops)
        if not self.stateful_random and stateful_parallel_map in self.rules.values():
            raise ValueError("the catalogue's stateful_map check needs the stateful random ops, the raw ops of an "
                             "entry with scan: {check: op_seed}, and it has none")
        self.xla = frozenset(entry.id for entry in catalogue if "xla" in entry.requires)
        self.raw_ops_only = frozenset(entry.id for entry in catalogue if entry.scan.raw_ops_only)

    def ruled_out(self, site, index, library, jit=False):
        """Entry ids whose condition this op provably does not meet. Entries about XLA
        hold only where XLA compiles: ruled out when no traced function is
        jit-compiled (auto-clustering, a global setting, is not visible in a graph)."""
        out = {entry for entry, rule in self.rules.items()
               if rule(site.node, index, library, self.stateful_random) is False}
        if not jit:
            out.update(self.xla)
        return frozenset(out)


def through_public_api(stack):
    """True if the op was created by a public TF API wrapper (tf.nn..., tf.math...),
    False if a caller outside TensorFlow called the generated op function directly
    (tf.raw_ops.X), None if the stack cannot tell."""
    paths = [path_of(frame.filename) for frame in stack]
    generated = [i for i, path in enumerate(paths) if "/tensorflow/python/ops/gen_" in path]
    if not generated:
        return None
    # outward from the generated function, past TF's own plumbing (tf.raw_ops's wrappers, dispatch)
    callers = [path for path in reversed(paths[:generated[0]])
               if "/tensorflow/python/framework/" not in path and "/tensorflow/python/util/" not in path]
    if not callers:
        return None
    return "/tensorflow/python/" in callers[0] or "/keras/" in callers[0]
