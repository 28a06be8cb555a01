"""Apply a mode inside the child, once, before anything runs: the one function
the probe's worker, diverge's training and locate's runs call.

A mode's environment variables are already in the child's environment (the
parent set them before TensorFlow was imported: launch.child_environ); what is
left is the API calls the mode lists and, for the patched mode, tfdet.patch().

Runs in the interpreter under test (Python 3.7 and up, the standard library,
numpy and TensorFlow only): Python 3.7 syntax, nothing imported at module level.
"""

MAX_WARNINGS = 10  # distinct warnings of tfdet.patch() kept for the record


def mode_spec(setup):
    """The plain-data part of a runtime.modes.ModeSetup a child needs: {env, unset, api_calls, patch}."""
    return {"env": dict(setup.env), "unset": list(setup.unset), "api_calls": list(setup.api_calls),
            "patch": bool(setup.patch)}


def apply_mode(tf, api_calls=(), patch=None, patch_kwargs=None):
    """Call the mode's determinism APIs and then `patch(**patch_kwargs)`: the
    caller's tfdet.patch for the patched mode (the runtime sits below the
    package's facade, so the feature hands it over), None otherwise.

    Returns what patch() warned (type: message, distinct, at most MAX_WARNINGS),
    or None without patch. The warnings are kept, never shown and never fatal:
    the mode runs either way, and the caller decides whether to record or print them.
    AttributeError when this TF lacks an API the mode calls.
    """
    from tfdet.tfinfo import resolve_api

    for call in api_calls:
        function = resolve_api(tf, call["name"])
        if function is None:
            raise AttributeError("TF %s has no %s" % (tf.__version__, call["name"]))
        function(*call.get("args", []))
    if patch is None:
        return None
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        patch(**dict(patch_kwargs or {}))
    said = []
    for warning in caught:
        text = "%s: %s" % (warning.category.__name__, str(warning.message)[:300])
        if text not in said and len(said) < MAX_WARNINGS:
            said.append(text)
    return said
