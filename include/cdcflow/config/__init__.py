"""A changefeed's configuration: the config file's keys, declared once with their checks and
meanings (`keys`, `checks`), their reading from TOML (`parsing`), and the spec files that keep a
changefeed's URIs and config text under CDCFLOW_HOME (`spec_store`).  The generated config
reference (docs/reference/config.md) is read off the key declarations."""
