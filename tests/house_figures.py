"""The house's figures: modules under tfdet/, import arrows between components,
declared sideways exceptions, as tests/test_layers.py sees them. Not a test.

    python tests/house_figures.py [CHECKOUT ...]    # default: this checkout

A checkout is a directory with tfdet/ and tests/test_layers.py, e.g.
`mkdir /tmp/before && git archive COMMIT tfdet tests/test_layers.py | tar -x -C /tmp/before`,
so figures before and after a change come from each one's own layer declarations.
"""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def figures(checkout):
    spec = importlib.util.spec_from_file_location("layers_of_" + str(abs(hash(checkout))),
                                                  os.path.join(checkout, "tests", "test_layers.py"))
    layers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layers)
    modules, graph, _ = layers.build_graph(os.path.join(checkout, "tfdet"))
    arrows = {(layers.component_of(a), layers.component_of(b)) for a, targets in graph.items() for b in targets}
    arrows = {(a, b) for a, b in arrows if a != b}
    module_arrows = sum(1 for a, targets in graph.items() for b in targets
                        if layers.component_of(a) != layers.component_of(b))
    return {"modules": len(modules), "components": len(layers.LAYERS), "component arrows": len(arrows),
            "module arrows across components": module_arrows, "sideways exceptions": len(layers.SIDEWAYS),
            "cycles": len(layers.find_cycles(graph)), "violations": len(layers.violations(graph))}


def main(argv):
    for checkout in argv or [HERE]:
        print("%s: %s" % (checkout, ", ".join("%s %d" % item for item in figures(os.path.abspath(checkout)).items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
