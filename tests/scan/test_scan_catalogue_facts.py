"""The scan's op facts come from the catalogue, and are facts about TensorFlow."""

import pytest

from tfdet.catalog import default_catalogue
from tfdet.scanning.conditions import CatalogueChecks

op_def_registry = pytest.importorskip("tensorflow.python.framework.op_def_registry")


def test_the_stateful_random_ops_are_ops_tensorflow_can_still_make():
    """The scan's list of stateful random ops had drifted from the catalogue: it held
    RandomPoisson, which TF removed at GraphDef version 25 (its OpDef's deprecation:
    'Replaced by RandomPoissonV2'), so no graph a scan traces can hold it."""
    for op in sorted(CatalogueChecks(default_catalogue()).stateful_random):
        op_def = op_def_registry.get(op)
        assert op_def is not None and op_def.is_stateful, op
        assert not op_def.HasField("deprecation"), "%s: %s" % (op, op_def.deprecation.explanation)
