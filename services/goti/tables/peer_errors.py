"""A peer's failure (the referee's, the computer player's) as the refusal the caller hears."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Final

from goti.tables.peers import PeerRefusedError, PeerUnavailableError
from goti.tables.refusals import CallRefusedError

# The referee's names for the move fields, and the names a PlayRequest gives them.
_REFEREE_FIELDS: Final = {"move_path.squares": "path.squares", "move_notation": "notation"}


def refused_by_peer(error: PeerRefusedError) -> CallRefusedError:
    """A peer's refusal, passed on in the names of the API's own fields."""
    status = error.status
    field = status.metadata.get("field")
    if field in _REFEREE_FIELDS:
        metadata = dict(status.metadata)
        metadata["field"] = _REFEREE_FIELDS[field]
        status = status._replace(metadata=metadata)
    return CallRefusedError(status)


def peer_unavailable(error: PeerUnavailableError) -> CallRefusedError:
    """UNAVAILABLE for a peer that did not answer: the command changed nothing."""
    return CallRefusedError.unavailable(f"{error}; nothing was changed, retry shortly")


@contextlib.contextmanager
def peer_refusals() -> Iterator[None]:
    """Pass a peer's refusal or silence on to the caller as a :class:`CallRefusedError`."""
    try:
        yield
    except PeerUnavailableError as error:
        raise peer_unavailable(error) from error
    except PeerRefusedError as error:
        raise refused_by_peer(error) from error
