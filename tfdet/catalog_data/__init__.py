"""The tfdet catalogue: YAML data and its JSON Schema, shipped as package data."""
