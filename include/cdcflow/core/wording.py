"""How a refusal names what a person can do next, in the words of the surface that refused:
the command line (commands and --options) or the Changefeeds page and its HTTP API (buttons
and fields).  Each check raises its error once, in one place; these two phrasings are all
it chooses from, and the CLI's are the default."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Words:
    surface: str
    commands: dict  # an operator's command (states.COMMANDS) -> how it is given
    fields: dict  # a value a person gives -> its name on this surface
    refused: str  # "{state}", "{command}": a command the state refuses
    only: str  # "{state}", "{commands}": what the state takes
    none: str  # "{state}": a state no command here changes
    current_tso: str  # where the current TSO is read
    resume_from_now: str  # a resume that moves the checkpoint to now

    def command(self, name: str) -> str:
        return self.commands[name]

    def field(self, name: str) -> str:
        return self.fields[name]


CLI = Words(
    surface="cli",
    commands={"pause": "`cdcflow changefeed pause`", "resume": "`cdcflow changefeed resume`"},
    fields={"overwrite_checkpoint_ts": "--overwrite-checkpoint-ts", "start_ts": "--start-ts"},
    refused="a {state} changefeed cannot take '{command}'",
    only="a {state} changefeed takes {commands}",
    none="no command changes a {state} changefeed (`remove` it, or `update` a stopped one)",
    current_tso="`cdcflow tso query` prints the current one",
    resume_from_now="`cdcflow changefeed resume --overwrite-checkpoint-ts now`",
)

PAGE = Words(
    surface="page",
    commands={"pause": "Pause", "resume": "Resume"},
    fields={"overwrite_checkpoint_ts": "overwrite checkpoint ts", "start_ts": "start ts"},
    refused="a {state} changefeed cannot be {command}d",
    only="a {state} changefeed can take {commands}",
    none="nothing on this page changes a {state} changefeed (the command line can remove it)",
    current_tso="'now' is the current one",
    resume_from_now="Resume with overwrite checkpoint ts 'now'",
)
