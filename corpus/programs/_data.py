"""Synthetic and bundled data for the corpus programs: the shapes and dtypes of
the public examples' data sets, generated from a seed (no network).

Each generator takes a numpy Generator or an int seed and returns numpy arrays
(or Python lists of strings), so a program's data is a pure function of its seed.
Helper "corpus2" may add generators at the END of this file only.
"""

import numpy as np


def _rng(seed):
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def digits(n=None):
    """scikit-learn's bundled 8x8 digits: images float32 [n, 8, 8, 1] in [0, 1], labels int32 [n]."""
    from sklearn.datasets import load_digits

    data = load_digits()
    images = (data.images / 16.0).astype(np.float32)[..., None]
    labels = data.target.astype(np.int32)
    return (images, labels) if n is None else (images[:n], labels[:n])


_POSITIVE = ("great", "wonderful", "superb", "moving", "brilliant", "fun", "clever", "beautiful", "loved", "best")
_NEGATIVE = ("awful", "boring", "dull", "terrible", "worst", "waste", "bad", "poor", "hated", "mess")
_NEUTRAL = ("the", "a", "movie", "film", "plot", "actor", "scene", "story", "was", "and", "it", "this", "of",
            "director", "music", "ending", "characters", "script", "camera", "with", "very", "quite", "too", "but")


def reviews(n, seed=0, min_words=8, max_words=40):
    """IMDB-like movie reviews: (texts: list of n str, labels int32 [n], 1 = positive).
    Each review mixes neutral words with sentiment words of its label (and a few of the other)."""
    rng = _rng(seed)
    labels = rng.integers(0, 2, size=n).astype(np.int32)
    texts = []
    for label in labels:
        length = int(rng.integers(min_words, max_words + 1))
        own, other = (_POSITIVE, _NEGATIVE) if label else (_NEGATIVE, _POSITIVE)
        pools = rng.choice(3, size=length, p=(0.65, 0.28, 0.07))
        words = [str(rng.choice((_NEUTRAL, own, other)[p])) for p in pools]
        texts.append(" ".join(words))
    return texts, labels


def token_sequences(n, seq_len, vocab, seed=0):
    """Integer token sequences int32 [n, seq_len] in [1, vocab) and a binary label int32 [n]
    (whether more tokens fall in the upper half of the vocabulary)."""
    rng = _rng(seed)
    tokens = rng.integers(1, vocab, size=(n, seq_len)).astype(np.int32)
    labels = ((tokens >= vocab // 2).mean(axis=1) > 0.5).astype(np.int32)
    return tokens, labels


def shapes(n, size=32, classes=3, channels=3, seed=0):
    """Small colour images float32 [n, size, size, channels] in [0, 1] of `classes` kinds of
    shapes (square, disc, cross, ...) at random places, with noise; labels int32 [n]."""
    rng = _rng(seed)
    yy, xx = np.mgrid[0:size, 0:size]
    images = rng.uniform(0.0, 0.2, size=(n, size, size, channels)).astype(np.float32)
    labels = rng.integers(0, classes, size=n).astype(np.int32)
    for i, label in enumerate(labels):
        cy, cx = rng.integers(size // 4, 3 * size // 4, size=2)
        r = int(rng.integers(size // 8, size // 4 + 1))
        kind = label % 3
        if kind == 0:
            mask = (abs(yy - cy) <= r) & (abs(xx - cx) <= r)
        elif kind == 1:
            mask = (yy - cy) ** 2 + (xx - cx) ** 2 <= r * r
        else:
            mask = ((abs(yy - cy) <= r // 3) & (abs(xx - cx) <= r)) | ((abs(xx - cx) <= r // 3) & (abs(yy - cy) <= r))
        colour = rng.uniform(0.5, 1.0, size=channels).astype(np.float32)
        images[i][mask] = colour
    return images, labels


def heart_table(n, seed=0):
    """A table shaped like the Cleveland heart-disease CSV of the Keras structured-data example:
    a dict of columns (int64 / float32 / str numpy arrays) and a binary target int32 [n]."""
    rng = _rng(seed)
    age = rng.integers(29, 78, size=n).astype(np.int64)
    sex = rng.integers(0, 2, size=n).astype(np.int64)
    cp = rng.integers(0, 5, size=n).astype(np.int64)
    trestbps = rng.normal(131, 17, size=n).astype(np.float32)
    chol = rng.normal(246, 51, size=n).astype(np.float32)
    fbs = rng.integers(0, 2, size=n).astype(np.int64)
    restecg = rng.integers(0, 3, size=n).astype(np.int64)
    thalach = rng.normal(150, 23, size=n).astype(np.float32)
    exang = rng.integers(0, 2, size=n).astype(np.int64)
    oldpeak = np.abs(rng.normal(1.0, 1.1, size=n)).astype(np.float32)
    slope = rng.integers(0, 3, size=n).astype(np.int64)
    ca = rng.integers(0, 4, size=n).astype(np.int64)
    thal = rng.choice(np.array(["normal", "fixed", "reversible"]), size=n)
    score = 0.04 * (age - 54) + 0.8 * exang + 0.5 * cp - 0.02 * (thalach - 150) + 0.6 * oldpeak + 0.7 * (thal == "reversible")
    target = (score + rng.normal(0, 0.7, size=n) > 0.8).astype(np.int32)
    columns = dict(age=age, sex=sex, cp=cp, trestbps=trestbps, chol=chol, fbs=fbs, restecg=restecg, thalach=thalach,
                   exang=exang, oldpeak=oldpeak, slope=slope, ca=ca, thal=thal)
    return columns, target


def weather(n, features=7, seed=0):
    """A multivariate timeseries shaped like the Jena climate records: float32 [n, features],
    daily and yearly cycles plus noise, each column with its own scale and offset."""
    rng = _rng(seed)
    t = np.arange(n, dtype=np.float64)
    daily, yearly = 2 * np.pi * t / 144.0, 2 * np.pi * t / (144.0 * 365)
    columns = []
    for k in range(features):
        phase = rng.uniform(0, 2 * np.pi)
        scale, offset = rng.uniform(0.5, 10.0), rng.uniform(-5, 1000 if k == 0 else 20)
        wave = np.sin(daily + phase) + 0.5 * np.sin(yearly + phase) + 0.1 * rng.normal(size=n).cumsum() / np.sqrt(n)
        columns.append(offset + scale * (wave + 0.2 * rng.normal(size=n)))
    return np.stack(columns, axis=1).astype(np.float32)


def ratings(n, users, movies, seed=0):
    """MovieLens-like ratings: user ids int32 [n], movie ids int32 [n] and ratings float32 [n]
    in [0, 1] (0.5-5 stars scaled), from hidden user and movie factors."""
    rng = _rng(seed)
    user_factor = rng.normal(size=(users, 4))
    movie_factor = rng.normal(size=(movies, 4))
    popularity = rng.zipf(1.6, size=n) % movies  # popular movies recur, as in MovieLens
    user = rng.integers(0, users, size=n).astype(np.int32)
    movie = popularity.astype(np.int32)
    affinity = (user_factor[user] * movie_factor[movie]).sum(axis=1)
    stars = np.clip(np.round((3.0 + affinity + rng.normal(0, 0.5, size=n)) * 2) / 2, 0.5, 5.0)
    return user, movie, ((stars - 0.5) / 4.5).astype(np.float32)


# -- what every program shares: its seeds, its result, its command line ------------------------


def seeds(seed):
    """(init_seed, batch_seed, ctx): under `tfdet diverge --script` the seeds of
    tfdet.diverge.context() and the context (whose save() writes the result),
    otherwise `seed` for both and ctx None."""
    import os

    if os.environ.get("TFDET_DIVERGE_OUT"):
        import tfdet.diverge

        ctx = tfdet.diverge.context()
        return ctx.init_seed, ctx.batch_seed, ctx
    return seed, seed, None


def result(weights, pred, ctx=None, steps=None, labels=None):
    """The dict train() returns ({"w000": ..., "pred": ...}); saved through ctx when given."""
    arrays = {"w%03d" % i: np.asarray(w) for i, w in enumerate(weights)}
    arrays["pred"] = np.asarray(pred)
    if ctx is not None and ctx.out is not None:
        pred2d = arrays["pred"].reshape(len(arrays["pred"]), -1).astype(np.float32)
        ctx.save(pred2d, weights=[arrays[k] for k in arrays if k != "pred"], labels=labels, steps=steps)
    return arrays


def gradients(tape, loss, variables):
    """{"loss": ..., "g000": ...} of one step; sparse gradients (IndexedSlices) made dense."""
    import tensorflow as tf

    out = {"loss": np.asarray(loss)}
    for i, (v, g) in enumerate(zip(variables, tape.gradient(loss, variables))):
        out["g%03d" % i] = np.zeros(v.shape, np.float32) if g is None else np.asarray(tf.convert_to_tensor(g))
    return out


def digest(arrays):
    """sha256 of the arrays' bytes in key order."""
    import hashlib

    h = hashlib.sha256()
    for key in sorted(arrays):
        h.update(np.ascontiguousarray(arrays[key]).tobytes())
    return h.hexdigest()


def main(name, train, steps):
    """`python corpus/programs/NAME.py [--steps N] [--seed S]`: train, print one JSON line."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog=name)
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(json.dumps({"program": name, "sha256": digest(train(steps=args.steps, seed=args.seed))}), flush=True)


def take(rows, *arrays):
    """The first `rows` rows of each array, cycling through it when it is shorter
    (so fit() on the result runs exactly rows / batch steps)."""
    out = []
    for a in arrays:
        index = np.arange(rows) % len(a)
        out.append(a[index])
    return out


def main_with_context(name, train, steps, argv=None, labels=None):
    """`python corpus/programs/NAME.py [--steps N] [--seed S]` for a program whose
    train(steps, seed, batch_seed=None) takes its seeds as arguments: under `tfdet
    diverge --script` the context's seeds, and the result saved through the context
    (with `labels()` when given); then one JSON line with the digest of the arrays."""
    import argparse
    import json

    import tfdet.diverge

    parser = argparse.ArgumentParser(prog=name)
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    ctx = tfdet.diverge.context()
    if ctx.out is None:
        out = train(args.steps, seed=args.seed)
    else:
        out = train(args.steps, seed=ctx.init_seed, batch_seed=ctx.batch_seed)
        ctx.save(out["pred"], weights=[out[k] for k in sorted(out) if k.startswith("w")],
                 labels=labels() if labels else None, steps=args.steps)
    print(json.dumps({"program": name, "sha256": digest(out)}))
