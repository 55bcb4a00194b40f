"""A text interface for language-model agents (docs/text.md): a seat's view as JSON and text, move names, a parser.

* :func:`describe` (observation [+ mask] -> JSON), :func:`render` (JSON -> text; ``compact=True``: the short form
  for small context windows, with the legal moves grouped by :func:`group_moves`), :func:`describe_state` /
  :func:`seat_text` for a state and seat; :func:`observation_from_description` reads a JSON description back into
  the exact observation vector (the description is lossless and, being built from the observation, leak-free).
* :func:`move_names` / :func:`move_name` / :func:`move_id` / :func:`legal_moves`: one stable short name per action id.
* :func:`parse_move`: a reply (move name, JSON object, free text; soft matching) -> a legal action id, or a
  :class:`MoveError` (``ValueError``) saying why not.
* :class:`RetryPolicy`, :func:`choose`, :class:`FailureStats`: re-asking after bad replies, with failures counted.
"""

from saboteur_env.text.codec import DescriptionError
from saboteur_env.text.describe import (
    describe,
    describe_state,
    group_moves,
    observation_from_description,
    render,
    seat_text,
)
from saboteur_env.text.games import game_format
from saboteur_env.text.moves import (
    AmbiguousMoveError,
    IllegalMoveError,
    MalformedReplyError,
    MoveError,
    UnknownMoveError,
    legal_moves,
    move_id,
    move_name,
    move_names,
    normalize,
    parse_move,
)
from saboteur_env.text.policy import (
    FAILURE_KINDS,
    FALLBACKS,
    FailureStats,
    RequestError,
    RetriesExhaustedError,
    RetryPolicy,
    choose,
)

__all__ = [
    "FAILURE_KINDS",
    "FALLBACKS",
    "AmbiguousMoveError",
    "DescriptionError",
    "FailureStats",
    "IllegalMoveError",
    "MalformedReplyError",
    "MoveError",
    "RequestError",
    "RetriesExhaustedError",
    "RetryPolicy",
    "UnknownMoveError",
    "choose",
    "describe",
    "describe_state",
    "game_format",
    "group_moves",
    "legal_moves",
    "move_id",
    "move_name",
    "move_names",
    "normalize",
    "observation_from_description",
    "parse_move",
    "render",
    "seat_text",
]
