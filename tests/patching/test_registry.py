"""The replacement registry is the one list: the catalogue's `patch:` names, the
installers and replacements.REPLACEMENTS all agree with it."""

import pytest

from tfdet.catalog import default_catalogue
from tfdet.patching import registry


def _catalogue_patch_names():
    return {r.patch for entry in default_catalogue() for ranges in entry.devices.values() for r in ranges if r.patch}


def test_every_catalogue_patch_name_has_a_registry_entry():
    missing = _catalogue_patch_names() - registry.names()
    assert not missing, "catalogue names replacements tfdet does not have: %s" % sorted(missing)


def test_every_registry_entry_is_named_by_some_catalogue_range():
    unused = registry.names() - _catalogue_patch_names()
    assert not unused, "registry entries no catalogue range asks for: %s" % sorted(unused)


def test_entries_are_well_formed():
    assert len(registry.names()) == len(registry.REGISTRY)  # one entry per name
    for r in registry.REGISTRY:
        assert r.install in (registry.REBIND, registry.GRADIENT), r
        if r.install == registry.REBIND:
            assert r.stock.startswith("tf."), r
        else:
            assert r.stock[:1].isupper() and "." not in r.stock, r  # an op type
    with pytest.raises(KeyError):
        registry.by_name("no_such_patch")


def test_installers_and_replacements_are_derived_from_it():
    pytest.importorskip("tensorflow")
    from tfdet.patching import bindings
    from tfdet.patching import replacements as R

    assert set(bindings.INSTALLERS) == registry.names()
    for r in registry.REGISTRY:
        assert bindings.INSTALLERS[r.name].label == registry.label(r)
        assert callable(getattr(R, r.implementation)), r
        if r.install == registry.GRADIENT:
            assert R.GRADIENTS[r.stock] is getattr(R, r.implementation)
        else:
            assert R.REPLACEMENTS[r.stock] is getattr(R, r.implementation)
    assert set(R.REPLACEMENTS) == {stock for stock, _ in registry.drop_in_pairs()}


def test_gradient_op_types_are_registered_in_tf():
    pytest.importorskip("tensorflow")
    from tensorflow.python.framework import ops

    for r in registry.REGISTRY:
        if r.install == registry.GRADIENT:
            assert r.stock in ops._gradient_registry._registry, r.stock
