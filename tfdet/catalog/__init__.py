"""The catalogue of known-nondeterministic TensorFlow ops: load, validate, query.

Beside the facade: crosscheck (a measurement against a claim), evidence (a
measurement in the catalogue's words), update and yaml_edit (`tfdet catalog
update`). They read probe results, so they are imported where used, not here:
tfdet.patch() loads the catalogue and needs none of them.
"""

from .errors import CatalogError, Problem
from .load import catalogue_files, default_catalogue, load_catalogue, load_user_catalogue
from .model import (
    DEVICES, STATUSES, VARYING_STATUSES, Catalogue, Entry, Evidence, Switch, UnknownName, Verdict, VersionRange,
    entry_to_dict, expected_to_vary, verdict_to_dict,
)
from .paths import shipped_catalogue_dir
from .sensitivity import SETTINGS, SettingFact
from .sources import describe_source
from .versions import (
    COVERED_TF_VERSIONS, StaleVersionWarning, UncoveredVersionError, answering_version, tf_minor,
)


def lookup(op_or_api, tf_version, device):
    """Status and fix of an op or API (any alias or raw op name) in the shipped catalogue.

    Raises UnknownName (with the closest names) for a name the catalogue does
    not know, UncoveredVersionError for a TF older than 1.14, ValueError for a
    non-version; warns StaleVersionWarning for a TF newer than the catalogue.
    """
    return default_catalogue().lookup(op_or_api, tf_version, device, missing_ok=False)


__all__ = [
    "COVERED_TF_VERSIONS", "DEVICES", "STATUSES", "VARYING_STATUSES", "CatalogError", "Catalogue", "Entry", "Evidence",
    "Problem", "StaleVersionWarning", "Switch", "UncoveredVersionError", "UnknownName", "Verdict",
    "VersionRange", "answering_version", "default_catalogue", "load_catalogue", "load_user_catalogue",
    "lookup", "shipped_catalogue_dir", "tf_minor", "entry_to_dict", "verdict_to_dict", "describe_source",
    "expected_to_vary", "catalogue_files", "SETTINGS", "SettingFact",
]
