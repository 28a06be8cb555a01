"""The report's modules: each one job, imports flowing one way (no circle
inside tfdet/report), and nothing from the probe or the CLI: the report reads
typed results (tfdet.results) and the catalogue only."""

import ast
import os
import subprocess
import sys

import tfdet.report

PACKAGE = os.path.dirname(os.path.abspath(tfdet.report.__file__))
ALLOWED = ("tfdet.results", "tfdet.catalog", "tfdet._version", "tfdet")


def _imports(name):
    """The absolute names a module of tfdet/report imports."""
    with open(os.path.join(PACKAGE, name + ".py"), encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                found.append(node.module)
                continue
            base = "tfdet.report" if node.level == 1 else "tfdet"
            if node.module:
                found.append(base + "." + node.module)
            else:
                found.extend(base + "." + a.name for a in node.names)
    return found


MODULES = sorted(f[:-3] for f in os.listdir(PACKAGE) if f.endswith(".py"))


def test_the_report_imports_only_results_and_the_catalogue_from_tfdet():
    for module in MODULES:
        for name in _imports(module):
            if name.startswith("tfdet") and not name.startswith("tfdet.report"):
                assert name == "tfdet" or name.startswith(ALLOWED), (module, name)


def test_no_import_circle_inside_the_report():
    graph = {m: {n.split(".")[2] for n in _imports(m) if n.startswith("tfdet.report.")} & set(MODULES)
             for m in MODULES if m != "__init__"}
    done, visiting = set(), []

    def visit(module):
        assert module not in visiting, "import circle: " + " -> ".join(visiting + [module])
        if module in done:
            return
        visiting.append(module)
        for other in graph.get(module, ()):
            visit(other)
        visiting.pop()
        done.add(module)

    for module in graph:
        visit(module)


def test_importing_the_report_loads_no_probe_module():
    code = "import sys, tfdet.report; print(sorted(m for m in sys.modules if m.startswith('tfdet.probe')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.dirname(PACKAGE)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
