"""The computer player: a pure search on :mod:`goti.rules` (no I/O, no asyncio, no protobuf).

>>> from goti.rules.game import Game
>>> result = choose_move(Game("english").state(), Level.QUICK, seed=1)
>>> result.notation in {"9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"}
True
"""

from goti.ai.levels import Level
from goti.ai.player import DrawDecision, SearchResult, choose_move, decide_draw

__all__ = ["DrawDecision", "Level", "SearchResult", "choose_move", "decide_draw"]
