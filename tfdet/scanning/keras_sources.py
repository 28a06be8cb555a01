"""Sources of nondeterminism a Keras model holds outside its graphs: unseeded
initializers (which draw a model's first weights) and unseeded random layers
(Dropout, RandomFlip, ...): the catalogue's entries with `scan: {keras: layer}`
or `scan: {keras: initializer}`. Read from the layer objects, since neither
leaves an unseeded op in a traced graph."""

from .findings import Site
from .passes import INITIALISATION


def _layers(model):
    flatten = getattr(model, "_flatten_layers", None)
    return list(flatten(include_self=False)) if flatten else list(getattr(model, "layers", []))


def named(catalogue, kind):
    """{class name: entry id} of the entries found on Keras objects of `kind` ("layer"
    or "initializer": their `scan: keras:`), by the class names their APIs end in
    (tf.keras.layers.Dropout -> Dropout)."""
    return {api.rsplit(".", 1)[-1]: entry.id for entry in catalogue if entry.scan.keras == kind for api in entry.apis}


def _seed_given(initializer):
    """The seed the user gave, or None. Keras 3 draws a random `seed` when none is
    given and keeps the given one as `_init_seed`; tf_keras keeps `seed` (None)."""
    if hasattr(initializer, "_init_seed"):
        return initializer._init_seed
    return getattr(initializer, "seed", 0)


def sites(model, catalogue, fresh=True):
    """Site for every unseeded initializer (only when the model will be built anew:
    `fresh`; weights loaded from a file were drawn already) and random layer."""
    layers, initializers = named(catalogue, "layer"), named(catalogue, "initializer")
    found = []
    for layer in _layers(model):
        path = getattr(layer, "path", None) or layer.name
        kind = type(layer).__name__
        if kind in layers and getattr(layer, "seed", None) is None:
            found.append(Site("%s layer" % kind, "forward", path, frozenset(), layers[kind]))
        if not fresh:
            continue
        for attribute, value in sorted(vars(layer).items()):
            if attribute.endswith("_initializer") and type(value).__name__ in initializers \
                    and _seed_given(value) is None:
                found.append(Site("%s initializer" % type(value).__name__, INITIALISATION,
                                  "%s.%s" % (path, attribute), frozenset(), initializers[type(value).__name__]))
    return found
