"""Reference pages generated from the code: the command line, the exit codes, the results schemas.

Pure functions return MyST text; the Sphinx hook writes them under docs/reference/_generated/
when a build starts, so the pages follow the code they describe.
"""

import json
import os

from page_files import write_if_changed

from tfdet.cli import exitcodes

SCHEMA_DIR = os.path.join(os.path.dirname(exitcodes.__file__), os.pardir, "results", "schemas")


def exit_codes_page():
    """The exit codes, from tfdet/cli/exitcodes.py: its constants and its docstring's table."""
    codes = {name: value for name, value in vars(exitcodes).items() if name.isupper() and isinstance(value, int)}
    lines = ["# Exit codes", "", "Every `tfdet` command shares one scheme (`tfdet/cli/exitcodes.py`).", "",
             "| code | name | meaning |", "|---|---|---|"]
    described = {}
    current = None
    for line in exitcodes.__doc__.splitlines()[1:]:
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[0].isdigit() and parts[1] in codes:
            current = parts[1]
            described[current] = parts[2].strip()
        elif current and line.strip():
            described[current] += " " + line.strip()
        else:
            current = None
    for name, value in sorted(codes.items(), key=lambda item: item[1]):
        lines.append("| `%d` | `%s` | %s |" % (value, name, described.get(name, "").replace("|", "\\|")))
    return "\n".join(lines) + "\n"


def schema_files():
    return sorted(name for name in os.listdir(SCHEMA_DIR) if name.endswith(".json"))


def schemas_page():
    lines = ["# Results schemas", "",
             "Every file tfdet writes carries a schema version, and `tfdet.results.load()` validates what it "
             "reads against these JSON Schemas (`tfdet/results/schemas/`).", ""]
    for name in schema_files():
        with open(os.path.join(SCHEMA_DIR, name), encoding="utf-8") as handle:
            schema = json.load(handle)
        lines += ["## %s" % name, ""]
        if schema.get("description") or schema.get("title"):
            lines += [" ".join(str(schema.get("description") or schema.get("title")).split()), ""]
        lines += ["```json", json.dumps(schema, indent=2, sort_keys=False), "```", ""]
    return "\n".join(lines)


def _commands(parser, prefix):
    """(name, parser) for every command and subcommand, depth first, in the order --help lists them."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield "%s %s" % (prefix, name), sub
                yield from _commands(sub, "%s %s" % (prefix, name))


def cli_page():
    """Every command's --help, exactly as the command prints it, read from build_parser()."""
    from tfdet.cli.app import build_parser

    parser = build_parser()
    lines = ["# Command line", "",
             "What `tfdet COMMAND --help` prints, for every command and subcommand, generated from the "
             "argument parsers (`tfdet.cli.app.build_parser()`), so it cannot drift from the tool.", "",
             "## tfdet", "", "```text", _help(parser), "```", ""]
    for name, sub in _commands(parser, "tfdet"):
        lines += ["## %s" % name, "", "```text", _help(sub), "```", ""]
    return "\n".join(lines)


def _help(parser):
    import os as _os

    columns = _os.environ.get("COLUMNS")
    _os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal; the page has one width
    try:
        return parser.format_help().rstrip()
    finally:
        if columns is None:
            del _os.environ["COLUMNS"]
        else:
            _os.environ["COLUMNS"] = columns


def pages():
    return {"exit-codes.md": exit_codes_page(), "schemas.md": schemas_page(), "cli.md": cli_page()}


def _on_builder_inited(app):
    folder = os.path.join(app.srcdir, "reference", "_generated")
    os.makedirs(folder, exist_ok=True)
    for name, text in pages().items():
        write_if_changed(os.path.join(folder, name), text)


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
