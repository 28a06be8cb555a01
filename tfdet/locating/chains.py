"""Which link of a folded chain made a difference. Pure.

capture.py does not hash an output whose one reader is elementwise
(capture.CHAIN_READERS): the reader's output stands for it, so a Conv2D ->
BiasAdd -> Relu chain is hashed at the Relu only. When the first root that
align.py finds reads such outputs, the op that made the difference may be one
of them (a Conv2D whose difference the BiasAdd and the Relu passed on).
locate's detail runs then save the root's output and theirs: the first of them,
in the order the ops were made, whose values differ between two detail runs is
the op that made the difference, since what the chain read from outside
matched (align.py) and every earlier link matched.
"""

from .capture import IMPLIED, SKIPPED

MAX_LINKS = 8  # the links saved in full by a detail run (the nearest to the root)
_FOLLOW_DEPTH = 32


def folded_links(run, execution):
    """The graph outputs upstream of `execution` (a root of `run`) that the run did not hash
    before it, reached through such outputs only, that can make a difference themselves
    (not an IMPLIED op's, which passes its input's bytes on): [(graph, name, slot), ...] in
    the order their ops were made. [] for an eager execution.

    Not hashed before it: folded (never hashed), or hashed only when a second reader came
    later (a folded output that one more op reads, as an activation its gradient reads):
    its fingerprint then comes after its first reader's in the trace, so align.py could
    not see it differ first."""
    if execution.key[0] != "g":
        return []
    occurrence = execution.key[4]
    position = {e.key[1:]: index for index, e in enumerate(run.executions) if e.key[0] == "g"}
    root_at = position.get(execution.key[1:], len(run.executions))
    made = {key: index for index, key in enumerate(run.ops)}
    found, seen = [], set()
    stack = [(tuple(ref), 0) for ref in execution.op.inputs if ref]
    while stack:
        ref, depth = stack.pop()
        if ref in seen or position.get(ref + (occurrence,), root_at) < root_at or depth > _FOLLOW_DEPTH:
            continue
        seen.add(ref)
        op = run.ops.get((ref[0], ref[1]))
        if op is None:  # a placeholder, a constant: nothing recorded, nothing that varies
            continue
        if op.op_type not in IMPLIED and op.op_type not in SKIPPED:
            found.append(ref)
        stack.extend((tuple(r), depth + 1) for r in op.inputs if r)
    found.sort(key=lambda ref: made.get((ref[0], ref[1]), -1))
    return found[-MAX_LINKS:]


def first_differing(order, differs):
    """The first key of `order` (links first, the root last) for which differs(key) is True,
    else None. differs: True, False, or None when a run saved nothing there."""
    for key in order:
        if differs(key):
            return key
    return None
