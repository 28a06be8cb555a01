"""`tfdet matrix`: every TensorFlow from 1.15 to 2.21 on this CPU, one cached
virtual environment per version, probed in the modes each has.

versions  the table (TF minor, Python, pins): data, one source of truth
venvs     find / smoke-test / create an environment; failures recorded, never raised
plan      which versions and modes, what the output directory already holds (pure)
job       one version as an executor job: environment, then `tfdet probe --python`
manifest  matrix.json: per version the environment and the probe, as they finish
run       the run: plans -> executor -> manifest
summary   per version, which cases varied in each mode (read from the results files)
"""

from .manifest import ManifestError, load as load_manifest
from .plan import MANIFEST_NAME, MATRIX_MODES, PlanError, parse_modes, parse_versions, results_path
from .run import MatrixConfig, MatrixExists, run_matrix
from .summary import changes as summary_changes, rows as summary_rows
from .venvs import venvs_dir
from .versions import VERSIONS, env_name

__all__ = ["MANIFEST_NAME", "MATRIX_MODES", "VERSIONS", "ManifestError", "MatrixConfig", "MatrixExists",
           "PlanError", "env_name", "load_manifest", "parse_modes", "parse_versions",
           "results_path", "run_matrix", "summary_changes", "summary_rows", "venvs_dir"]
