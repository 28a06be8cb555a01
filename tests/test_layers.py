"""The import graph of tfdet: no circles, and imports flow down through the layers.

Every module under tfdet/ is parsed with `ast` (nothing is imported); every
import counts, at module level or inside a function, relative or absolute, and
so does importlib.import_module of a tfdet module (the package's lazy facade).
`from package import name` counts as an import of the module the package
re-exports `name` from, so `from .. import __version__` is an edge to
tfdet._version, not to the whole package.

The layers, top to bottom (a module may import its own component and anything
in a lower layer; never upward, never sideways into another component of its
own layer unless SIDEWAYS says why):

    4  entry     tfdet.cli, tfdet.__main__
    3  features  tfdet.probe, tfdet.patching (+ the tfdet package: the public
                 face of patch/unpatch/status/deterministic), tfdet.report,
                 tfdet.scanning, tfdet.locating (+ tfdet.testing), tfdet.diverge,
                 tfdet.matrix, tfdet.compare
    2  core      tfdet.results, tfdet.catalog (+ tfdet.catalog_data),
                 tfdet.executor (runs independent jobs; features use it),
                 tfdet.runtime (starts and sets up every child process: modes,
                 launch, apply; the only module that starts processes)
    1  base      tfdet.tfinfo, tfdet._version, tfdet.progress (the events of a long run)
"""

import ast
import os
import sys

import pytest

import tfdet

PACKAGE_DIR = os.path.dirname(os.path.abspath(tfdet.__file__))

# component -> (layer, module prefixes). A module belongs to the component of its
# longest matching prefix; a module matching none fails the test (declare it here).
LAYERS = {
    "cli": (4, ["tfdet.cli", "tfdet.__main__"]),
    "probe": (3, ["tfdet.probe"]),
    "patching": (3, ["tfdet.patching"]),
    "facade": (3, ["tfdet"]),  # the package: lazily re-exports tfdet.patch (patching) and tfdet.scan (scanning)
    "report": (3, ["tfdet.report"]),
    "scanning": (3, ["tfdet.scanning"]),
    "locating": (3, ["tfdet.locating", "tfdet.testing"]),  # locate, and the test assertions built on it
    "diverge": (3, ["tfdet.diverge"]),
    "matrix": (3, ["tfdet.matrix"]),  # every TF version's environment, probed
    "compare": (3, ["tfdet.compare"]),  # is A better than B: paired trainings, P(A>B)
    "results": (2, ["tfdet.results"]),
    "catalog": (2, ["tfdet.catalog", "tfdet.catalog_data"]),
    "graph": (2, ["tfdet.graph"]),  # the one graph walker: protos in, ops out
    "executor": (2, ["tfdet.executor"]),  # local process pool or dask.distributed; diverge (later probe, matrix)
    "runtime": (2, ["tfdet.runtime"]),  # the modes, the one launcher, the one way a child applies its mode
    "tfinfo": (1, ["tfdet.tfinfo"]),
    "version": (1, ["tfdet._version"]),
    "lazy": (1, ["tfdet._lazy"]),  # the lazy package facades' one __getattr__
    "progress": (1, ["tfdet.progress"]),  # the events a long run sends to whoever shows its progress
}

# Imports between two components of one layer that are part of the design.
SIDEWAYS = {
    # The probe measures the "patched" mode: its worker calls tfdet.patch() (the
    # public facade) in the interpreter under test, and runner.patch_available()
    # asks the facade whether it exists. Only the facade: patching never imports probe.
    ("probe", "facade"): "the worker applies tfdet.patch() for the patched mode",
    ("facade", "patching"): "the package re-exports patch, unpatch, status, deterministic",
    ("facade", "scanning"): "the package re-exports scan",
    ("facade", "locating"): "the package re-exports locate",
    # A scan judges ops after the fixes tfdet.patch() would apply: it asks the
    # patch's own plan (one source of what the patch covers), never installs it.
    ("scanning", "patching"): "the scan asks the patch's plan what tfdet.patch() would fix",
    # Locate says what the catalogue advises for the op it found exactly as the
    # scan says it for an op it finds (one judgement), and applies tfdet.patch()
    # in a run when asked to (--patch).
    ("locating", "scanning"): "locate judges the op it found with the scan's findings",
    ("locating", "facade"): "a run under --patch calls tfdet.patch()",
    # `locate --record` describes the machine with the probe's one account of CPU, GPUs,
    # driver, CUDA and cuDNN (tfdet/probe/environment.py), adding only what locate needs.
    ("locating", "probe"): "locate --record describes the machine as the probe's worker does",
    # The patched mode calls tfdet.patch() inside the training process.
    ("diverge", "facade"): "a patched training calls tfdet.patch()",
    # compare starts its trainings through diverge's one-training job, modes and
    # workloads: one way to launch TensorFlow processes, not a second one.
    ("compare", "diverge"): "compare trains through diverge's job (run_training), modes and workloads",
    # The runtime's modes are the catalogue's switches (runtime.modes); a child dies
    # with its parent and a job's child stops with its job by the executor's
    # lifeline and signal handling.
    ("runtime", "catalog"): "what each mode switches on comes from the catalogue's switches",
    ("runtime", "executor"): "a child dies with its parent (lifeline) and stops with its job (signals)",
    # The catalogue judges measurements against its claims (catalog.crosscheck, used by
    # the report and by `tfdet catalog update`) in the results' own words: outcomes,
    # modes, records. One way only: tfdet.results never imports the catalogue.
    ("catalog", "results"): "the catalogue's claims are checked against measured results",
}

# Edges (importer, imported) that break the layers and are allowed for now. The
# test fails if one of them disappears (delete it here then: this list can only
# shrink) and for any edge not listed. Empty since the results layer (issue 12).
KNOWN_VIOLATIONS = set()

# tfdet.results is imported by the worker under Python 3.7 with only numpy and TF
# installed: at module import time it uses the standard library only. Exceptions:
RESULTS_TOP_LEVEL_ALLOWED = {
    # stats.py is numpy arithmetic throughout (digests, ULP distances, bootstrap);
    # the worker has numpy wherever it has TensorFlow.
    ("tfdet.results.stats", "numpy"),
}
# Imported inside functions only (optional, or slow to import).
RESULTS_LAZY_ALLOWED = {"numpy", "pandas", "jsonschema"}


# --------------------------------------------------------------------------- the graph


class Import(object):
    def __init__(self, importer, target, line, lazy):
        self.importer = importer  # tfdet module doing the import
        self.target = target  # full dotted name imported (tfdet or third-party)
        self.line = line
        self.lazy = lazy  # inside a function: not run at the importer's import time

    def __repr__(self):
        return "%s:%d -> %s%s" % (self.importer, self.line, self.target, " (lazy)" if self.lazy else "")


def discover(package_dir=PACKAGE_DIR, package="tfdet"):
    """{module name: path} of every .py file under the package."""
    modules = {}
    root = os.path.dirname(package_dir)
    for directory, dirnames, filenames in os.walk(package_dir):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for filename in sorted(filenames):
            if filename.endswith(".py"):
                path = os.path.join(directory, filename)
                parts = os.path.relpath(path, root)[:-3].split(os.sep)
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                modules[".".join(parts)] = path
    assert package in modules
    return modules


def _inside_function(stack):
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) for n in stack)


def _walk(node, stack=()):
    yield node, stack
    for child in ast.iter_child_nodes(node):
        yield from _walk(child, stack + (node,))


def _is_import_module(call):
    """importlib.import_module(...), or tfdet._lazy.facade(...) (which imports the modules its table names)."""
    func = call.func
    return ((isinstance(func, ast.Attribute) and func.attr in ("import_module", "facade"))
            or (isinstance(func, ast.Name) and func.id in ("import_module", "facade")))


def raw_imports(name, path, is_package):
    """Every import in one module, as Import(target = full dotted name)."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    package = name if is_package else name.rpartition(".")[0]
    found, dynamic, strings = [], False, []
    for node, stack in _walk(tree):
        lazy = _inside_function(stack)
        if isinstance(node, ast.Import):
            found.extend(Import(name, alias.name, node.lineno, lazy) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            for alias in node.names:
                found.append(Import(name, module + "." + alias.name if alias.name != "*" else module, node.lineno, lazy))
        elif isinstance(node, ast.Call) and _is_import_module(node):
            dynamic = True
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.append((node.value, node.lineno, lazy))
    if dynamic:  # importlib.import_module(x): any string naming a tfdet module is a target
        found.extend(Import(name, value, line, True) for value, line, _ in strings
                     if value == "tfdet" or value.startswith("tfdet."))
        found.extend(Import(name, package + value, line, True) for value, line, _ in strings  # ".runner"
                     if value.startswith(".") and len(value) > 1 and value[1:].replace("_", "").isalnum())
    return found


def _reexports(modules):
    """{(package, name): module it is imported from} from each package's top-level `from .x import name`."""
    table = {}
    for name, path in modules.items():
        if not path.endswith("__init__.py"):
            continue
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), path)
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                source = name + "." + node.module
                for alias in node.names:
                    table[(name, alias.asname or alias.name)] = source
    return table


def resolve(target, modules, reexports):
    """The tfdet module an imported dotted name lands in (None if not tfdet)."""
    if target != "tfdet" and not target.startswith("tfdet."):
        return None
    seen = set()
    while target not in modules:
        owner, _, attribute = target.rpartition(".")
        if (owner, attribute) in reexports and target not in seen:
            seen.add(target)
            target = reexports[(owner, attribute)]
        else:
            target = owner  # `from module import function`, or `import a.b.c` of an attribute
    return target


def build_graph(package_dir=PACKAGE_DIR):
    """(modules, graph {module: {module: [Import]}}, imports [Import]) of tfdet."""
    modules = discover(package_dir)
    reexports = _reexports(modules)
    graph = {name: {} for name in modules}
    imports = []
    for name, path in modules.items():
        for item in raw_imports(name, path, path.endswith("__init__.py")):
            imports.append(item)
            target = resolve(item.target, modules, reexports)
            if target is not None and target != name:
                graph[name].setdefault(target, []).append(item)
    return modules, graph, imports


def find_cycles(graph):
    """One cycle [a, b, ..., a] for every strongly connected component that has one
    (Tarjan's algorithm, then a shortest way round inside the component)."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = [0]

    def connect(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                connect(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            components.append(component)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    cycles = []
    for component in components:
        start = min(component)
        if len(component) == 1 and start not in graph.get(start, ()):
            continue
        # breadth-first from start, inside the component, until an edge leads back to start
        previous, frontier, last = {start: None}, [start], None
        while frontier and last is None:
            following = []
            for node in frontier:
                successors = sorted(graph.get(node, ()))
                if start in successors:
                    last = node
                    break
                for succ in successors:
                    if succ in component and succ not in previous:
                        previous[succ] = node
                        following.append(succ)
            frontier = following
        path = []
        while last is not None:
            path.append(last)
            last = previous[last]
        cycles.append(path[::-1] + [start])
    return sorted(cycles)


def component_of(module):
    best = None
    for component, (_, prefixes) in LAYERS.items():
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > len(best[1]):
                    best = (component, prefix)
    return best[0] if best else None


def violations(graph):
    """{(importer, imported): why} for every edge that goes up or sideways undeclared."""
    found = {}
    for importer, targets in graph.items():
        for imported in targets:
            a, b = component_of(importer), component_of(imported)
            if a == b:
                continue
            la, lb = LAYERS[a][0], LAYERS[b][0]
            if la < lb:
                found[(importer, imported)] = "upward: %s (layer %d) imports %s (layer %d)" % (a, la, b, lb)
            elif la == lb and (a, b) not in SIDEWAYS:
                found[(importer, imported)] = "sideways: %s imports %s, both layer %d" % (a, b, la)
    return found


@pytest.fixture(scope="module")
def tfdet_graph():
    return build_graph()


# --------------------------------------------------------------------------- the tests


def test_the_graph_sees_what_it_should(tfdet_graph):
    modules, graph, _ = tfdet_graph
    assert len(modules) > 40
    # function-level, relative, two dots up
    assert "tfdet.catalog.paths" in graph["tfdet.catalog.load"]
    # the package's lazy facade, through importlib.import_module
    assert "tfdet.patching.install" in graph["tfdet"]
    # `from .. import __version__` is an import of _version, through the package's re-export
    assert "tfdet._version" in graph["tfdet.cli.app"] and "tfdet" not in graph["tfdet.cli.app"]
    # an absolute import inside a function
    assert "tfdet.probe.cases" in graph["tfdet.probe.worker"]


def test_no_import_cycles(tfdet_graph):
    _, graph, _ = tfdet_graph
    cycles = find_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(
        "  " + " -> ".join(c) + "\n    " + "; ".join(
            repr(i) for a, b in zip(c, c[1:]) for i in graph[a][b]) for c in cycles)


def test_every_module_has_a_layer(tfdet_graph):
    modules, _, _ = tfdet_graph
    undeclared = sorted(m for m in modules if component_of(m) is None)
    assert not undeclared, "declare these in LAYERS (tests/test_layers.py): %s" % undeclared


def test_imports_flow_down_through_the_layers(tfdet_graph):
    _, graph, _ = tfdet_graph
    found = violations(graph)
    new = {edge: why for edge, why in found.items() if edge not in KNOWN_VIOLATIONS}
    assert not new, "imports against the layers:\n" + "\n".join(
        "  %s -> %s: %s (%s)" % (a, b, why, "; ".join(repr(i) for i in graph[a][b]))
        for (a, b), why in sorted(new.items()))
    gone = sorted(KNOWN_VIOLATIONS - set(found))
    assert not gone, "no longer violations: remove them from KNOWN_VIOLATIONS in tests/test_layers.py: %s" % gone


def test_sideways_declarations_are_used(tfdet_graph):
    _, graph, _ = tfdet_graph
    used = {(component_of(a), component_of(b)) for a, targets in graph.items() for b in targets}
    assert not set(SIDEWAYS) - used, "SIDEWAYS declares imports that no longer exist: %s" % sorted(
        set(SIDEWAYS) - used)


def _is_stdlib(name):
    top = name.split(".")[0]
    return top in sys.stdlib_module_names or top == "__future__"


def test_results_imports_only_the_standard_library_at_import_time(tfdet_graph):
    _, _, imports = tfdet_graph
    bad = []
    for item in imports:
        if not (item.importer == "tfdet.results" or item.importer.startswith("tfdet.results.")):
            continue
        if item.target.startswith("tfdet.results") or _is_stdlib(item.target):
            continue
        top = item.target.split(".")[0]
        if item.lazy and top in RESULTS_LAZY_ALLOWED:
            continue
        if not item.lazy and (item.importer, top) in RESULTS_TOP_LEVEL_ALLOWED:
            continue
        bad.append(item)
    assert not bad, "tfdet.results imports beyond the standard library: %s" % bad


def test_the_workers_modules_parse_as_python_3_7(tfdet_graph):
    """The worker runs in the interpreter under test, Python 3.7 and up: every
    tfdet module it can reach must be Python 3.7 syntax (as far as ast checks)."""
    modules, graph, _ = tfdet_graph
    reach, todo = set(), ["tfdet.probe.worker"]
    while todo:
        module = todo.pop()
        if module not in reach:
            reach.add(module)
            todo.extend(graph[module])
    assert {"tfdet.probe.cases_ops", "tfdet.results.stats", "tfdet.patching.install"} <= reach
    for module in sorted(reach):
        with open(modules[module], encoding="utf-8") as handle:
            ast.parse(handle.read(), modules[module], feature_version=(3, 7))


# --------------------------------------------------------------------------- the checker can fail


def test_find_cycles_on_hand_made_graphs():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"a"}}) == [["a", "a"]]
    # two separate circles, and the shortest way round a component with a chord
    cycles = find_cycles({"a": {"b"}, "b": {"a", "c"}, "c": {"d"}, "d": {"c"}, "x": {"y"}, "y": {"z"}, "z": {"x", "y"}})
    assert cycles == [["a", "b", "a"], ["c", "d", "c"], ["x", "y", "z", "x"]]


def test_violations_on_a_hand_made_graph():
    graph = {
        "tfdet.probe.summary": {"tfdet.cli.table": []},  # upward
        "tfdet.report.model": {"tfdet.probe.modes": []},  # sideways, undeclared
        "tfdet.probe.worker": {"tfdet": [], "tfdet.results.stats": []},  # declared sideways; downward
        "tfdet.cli": {"tfdet.probe.runner": []},  # downward
        "tfdet.results.records": {"tfdet.catalog.model": []},  # sideways in the core
    }
    assert set(violations(graph)) == {
        ("tfdet.probe.summary", "tfdet.cli.table"), ("tfdet.report.model", "tfdet.probe.modes"),
        ("tfdet.results.records", "tfdet.catalog.model")}


def test_the_parser_sees_every_kind_of_import(tmp_path):
    package = tmp_path / "tfdet"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from ._version import __version__\n"
        "def __getattr__(name):\n    import importlib\n    return importlib.import_module('tfdet.sub.b')\n")
    (package / "_version.py").write_text("__version__ = '0'\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "a.py").write_text(
        "import os\nfrom .. import __version__\nfrom . import b\n"
        "def f():\n    from tfdet.sub.c import thing\n    import tfdet.sub.d\n")
    (package / "sub" / "b.py").write_text("from .a import x\n")
    (package / "sub" / "c.py").write_text("thing = 1\n")
    (package / "sub" / "d.py").write_text("")
    _, graph, imports = build_graph(str(package))
    assert {k: sorted(v) for k, v in graph.items()} == {
        "tfdet": ["tfdet._version", "tfdet.sub.b"], "tfdet._version": [], "tfdet.sub": [],
        "tfdet.sub.a": ["tfdet._version", "tfdet.sub.b", "tfdet.sub.c", "tfdet.sub.d"],
        "tfdet.sub.b": ["tfdet.sub.a"], "tfdet.sub.c": [], "tfdet.sub.d": []}
    assert find_cycles(graph) == [["tfdet.sub.a", "tfdet.sub.b", "tfdet.sub.a"]]
    lazy = {(i.importer, i.target): i.lazy for i in imports}
    assert lazy[("tfdet.sub.a", "os")] is False and lazy[("tfdet.sub.a", "tfdet.sub.c.thing")] is True


# --------------------------------------------------------------------------- who starts processes

# Only tfdet.runtime starts processes (launch.py: one interpreter choice, one way
# to load tfdet that a checkout cannot shadow, one timeout, stop and stderr tail).
# Modules outside it that may, and why:
STARTS_PROCESSES_ALLOWED = {
    # The local executor's process pool: spawned interpreters that run jobs (which
    # start their TensorFlow children through tfdet.runtime), not TensorFlow children.
    "tfdet.executor.local": "the executor's process pool runs jobs, each launching through tfdet.runtime",
}

_PROCESS_MODULES = ("subprocess", "multiprocessing", "pty", "concurrent.futures.process")
_PROCESS_CALLS = {"os": ("fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp", "spawn", "exec"),
                  "concurrent.futures": ("ProcessPoolExecutor",)}


def process_starts(source, name="<module>"):
    """[(line, what)] where a module's source starts (or imports the means to start) a process."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, "import " + a.name) for a in node.names
                         if a.name.startswith(_PROCESS_MODULES))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.startswith(_PROCESS_MODULES):
                found.append((node.lineno, "from %s import" % node.module))
            for alias in node.names:
                if alias.name.startswith(_PROCESS_CALLS.get(node.module, ())):
                    found.append((node.lineno, "from %s import %s" % (node.module, alias.name)))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.attr.startswith(_PROCESS_CALLS.get(node.value.id, ())):
                found.append((node.lineno, "%s.%s" % (node.value.id, node.attr)))
        elif isinstance(node, ast.Attribute) and node.attr == "ProcessPoolExecutor":
            found.append((node.lineno, "ProcessPoolExecutor"))
    return found


def test_only_the_runtime_starts_processes(tfdet_graph):
    modules, _, _ = tfdet_graph
    bad = []
    for module, path in sorted(modules.items()):
        if component_of(module) == "runtime" or module in STARTS_PROCESSES_ALLOWED:
            continue
        with open(path, encoding="utf-8") as handle:
            bad.extend("%s:%d %s" % (module, line, what) for line, what in process_starts(handle.read(), path))
    assert not bad, ("start processes through tfdet.runtime.launch (or allow-list the module, with the reason, "
                     "in STARTS_PROCESSES_ALLOWED):\n  " + "\n  ".join(bad))
    assert all(process_starts(open(modules[m], encoding="utf-8").read()) for m in STARTS_PROCESSES_ALLOWED), \
        "an allowed module no longer starts processes: remove it from STARTS_PROCESSES_ALLOWED"
    assert process_starts(open(modules["tfdet.runtime.launch"], encoding="utf-8").read())


def test_the_process_check_sees_every_way_to_start_one():
    source = ("import subprocess\nimport multiprocessing.pool\nfrom subprocess import Popen\nimport os\n"
              "from os import execv\nimport concurrent.futures\n"
              "def f():\n    os.fork()\n    os.execvpe('x', [], {})\n    os.system('ls')\n"
              "    concurrent.futures.ProcessPoolExecutor()\n    os.getpid()\n")
    assert sorted(line for line, _ in process_starts(source)) == [1, 2, 3, 5, 8, 9, 10, 11]
    assert process_starts("import os\nimport threading\nos.path.join('a')\nos.environ.get('x')\n") == []
