"""Sources of nondeterminism a Keras model holds outside its graphs: unseeded
initializers (which draw a model's first weights) and unseeded random layers
(Dropout, RandomFlip, ...), the catalogue's keras-unseeded-* entries. Read from
the layer objects, since neither leaves an unseeded op in a traced graph."""

from .findings import Site
from .passes import INITIALISATION

# initializers; Dropout and noise layers; random preprocessing layers
ENTRIES = ("keras-unseeded-rng", "keras-unseeded-dropout", "keras-unseeded-random-layers")


def _layers(model):
    flatten = getattr(model, "_flatten_layers", None)
    return list(flatten(include_self=False)) if flatten else list(getattr(model, "layers", []))


def _named(catalogue):
    """{class name: entry id} for the classes the entries' APIs name
    (tf.keras.layers.Dropout -> Dropout)."""
    named = {}
    for entry_id in ENTRIES:
        try:
            entry = catalogue.get(entry_id)
        except KeyError:
            continue
        named.update((api.rsplit(".", 1)[-1], entry_id) for api in entry.apis)
    return named


def _seed_given(initializer):
    """The seed the user gave, or None. Keras 3 draws a random `seed` when none is
    given and keeps the given one as `_init_seed`; tf_keras keeps `seed` (None)."""
    if hasattr(initializer, "_init_seed"):
        return initializer._init_seed
    return getattr(initializer, "seed", 0)


def sites(model, catalogue, fresh=True):
    """Site for every unseeded initializer (only when the model will be built anew:
    `fresh`; weights loaded from a file were drawn already) and random layer."""
    names = _named(catalogue)
    found = []
    for layer in _layers(model):
        path = getattr(layer, "path", None) or layer.name
        kind = type(layer).__name__
        if kind in names and getattr(layer, "seed", None) is None:
            found.append(Site("%s layer" % kind, "forward", path, frozenset(), names[kind]))
        if not fresh:
            continue
        for attribute, value in sorted(vars(layer).items()):
            if attribute.endswith("_initializer") and type(value).__name__ in names \
                    and _seed_given(value) is None:
                found.append(Site("%s initializer" % type(value).__name__, INITIALISATION,
                                  "%s.%s" % (path, attribute), frozenset(), names[type(value).__name__]))
    return found
