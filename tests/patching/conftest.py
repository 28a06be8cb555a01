import pytest


@pytest.fixture(autouse=True)
def _order_fixed_method():
    """Every test here exercises the order-fixed path (the one used on GPUs) unless it selects another."""
    from tfdet.patching import primitive

    with primitive.method_scope("order_fixed"):
        yield
