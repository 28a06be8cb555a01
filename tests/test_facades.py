"""Every name a lazy package facade offers resolves (a typo in a facade's table
would otherwise show only when a user first reaches for that name)."""

import importlib

import pytest

FACADES = ["tfdet", "tfdet.probe", "tfdet.patching", "tfdet.scanning"]


@pytest.mark.parametrize("package", FACADES)
def test_every_facade_name_resolves(package):
    module = importlib.import_module(package)
    assert module._LAZY
    for name in module._LAZY:
        assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018


@pytest.mark.parametrize("package", FACADES)
def test_no_facade_name_is_also_a_submodule(package):
    # importing package.X sets the package's attribute X to that module, which
    # would replace a facade function of the same name (tfdet status once called
    # a module because a test had imported tfdet.patching.preview)
    import pkgutil

    module = importlib.import_module(package)
    submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
    assert not set(module._LAZY) & submodules
