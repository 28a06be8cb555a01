"""How tfdet starts and sets up a TensorFlow process: the one runtime.

- modes.py: what each mode switches on, per TF version (from the catalogue's switches);
- launch.py: the one way to start a child process (interpreter, the tfdet that
  cannot be shadowed, environment, timeout, stopping, exit description, stderr tail);
- apply.py: the one function that applies a mode inside the child, before anything runs.

Nothing is imported here: the probe's worker imports runtime.apply in an
interpreter under test (Python 3.7, only numpy and TF), and only that.
"""
