"""Where the shipped catalogue lives (its YAML files and schema.json).

The bottom of tfdet.catalog: load.py reads the files, validate.py the schema.
"""

import os


def shipped_catalogue_dir():
    """The directory of the catalogue shipped inside the installed package."""
    from .. import catalog_data  # a package, so this works for wheels and editable installs alike

    return os.path.dirname(os.path.abspath(catalog_data.__file__))
