"""Endgame tables built by Goti itself: every position of a few pieces, solved.

For each variant and each material of up to four pieces (men and kings, a piece on each
side) a table holds, per position, whether the side to move wins, loses or draws with best
play and in how many plies the winner converts (:mod:`goti.ai.endgames.values`).  They are
solved by retrograde analysis over Goti's own move generator (:mod:`goti.ai.endgames.building`),
stored one file per material (:mod:`goti.ai.endgames.storage`) and checked move by move by
``goti endgames verify`` (:mod:`goti.ai.endgames.verifying`).  Larger sets (five pieces) are
built by the same command into a folder of the operator's and read by Master alone
(:func:`goti.ai.player.use_master_tables`, :func:`~goti.ai.endgames.probing.complete_tables`).

The move-count draw rules and repetitions are not part of a table: a table value is the
result of the position itself, as chess and checkers tables are.

Probing, from a :class:`~goti.rules.position.Position`:

>>> from goti.rules.position import Position
>>> probe(Position.from_fen("W:WK4:BK11", "english"))
<Outcome.LOSS: 'loss'>

and at a search's leaves, on the search's own side-relative bitboards (``mine`` to move)::

    tables = shipped_tables(variant)           # once per search; files load on first use
    if (mine | theirs).bit_count() <= tables.max_pieces:
        outcome = tables.probe_sides(mine, theirs, kings, white)   # None: not covered
"""

from goti.ai.endgames.indexing import Index, Material
from goti.ai.endgames.probing import EndgameTables, Probe, probe, shipped_tables
from goti.ai.endgames.values import Outcome

__all__ = ["EndgameTables", "Index", "Material", "Outcome", "Probe", "probe", "shipped_tables"]
