"""What the console asks before each connector action: a title and a question per action
(Connect's own verbs), shown by confirm.js and by the server's confirmation page."""
from __future__ import annotations

CONFIRM = {
    "pause": ("Pause the connector", "Pause {name}? Its tasks stop processing records until it is resumed; it keeps "
                                     "its tasks and offsets."),
    "resume": ("Resume the connector", "Resume {name}? Its tasks go on from their committed offsets."),
    "stop": ("Stop the connector", "Stop {name}? Connect shuts the connector and its tasks down (no task stays "
                                   "assigned) until it is resumed; its offsets can then be reset."),
    "restart": ("Restart the connector", "Restart the connector {name} (its tasks keep running)?"),
    "restart-failed": ("Restart failed tasks", "Restart the failed tasks of {name} (and the connector, if it "
                                               "failed)?"),
    "restart-all": ("Restart everything", "Restart {name} and all its tasks?"),
    "delete": ("Delete the connector", "Delete {name}? Connect removes its config and stops its tasks. Its committed "
                                       "offsets stay (a connector created again with this name resumes from them)."),
    "reset-offsets": ("Reset the offsets", "Reset the offsets of {name}? A source connector starts over from the "
                                           "beginning of its source; a sink's consumer group connect-{name} is "
                                           "deleted, so it starts from its configured position."),
}


def confirm_messages(*, name: str) -> dict[str, str]:
    """Each action's question about connector `name`, keyed for templates (`restart_failed`)."""
    return {action.replace("-", "_"): text.format(name=name) for action, (_, text) in CONFIRM.items()}
