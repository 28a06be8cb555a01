"""Deterministic replacements for TensorFlow ops that are nondeterministic on GPUs.

`primitive` holds the one order-fixed segment reduction everything is built on;
`replacements` holds the drop-in functions (same signatures as the stock APIs)
that tfdet.patch() installs where the catalogue says the installed TensorFlow
and device need them. The install/undo layer lives elsewhere; importing this
package imports nothing (not even TensorFlow).
"""
