"""The client: one channel to Goti's public API, the player it acts for, and every call.

Commands (create, join, play, draw offers, resign, take back, rematch) carry a
``request_id`` and an ``expected_seq``.  The client fills both unless given: a fresh id per
command, and the latest seq it has seen of the table in any response or watch.  Every unary
call has a deadline, and a call that fails with UNAVAILABLE, CANCELLED or DEADLINE_EXCEEDED is
tried again until then (a command with the same ``request_id``, so a reply lost on the way
back never plays a move twice): a replica stopping in a deploy costs a retry, never an error.
Watches have no deadline and reconnect by themselves (:mod:`goti_client.watches`).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Generator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self, TypeVar

import grpc

from goti.api.v1 import players_pb2, players_pb2_grpc, tables_pb2, tables_pb2_grpc
from goti.api.v1.matchmaking_pb2_grpc import MatchmakingServiceStub
from goti.rules import ENGLISH, Color, Move, Variant
from goti_client import wire
from goti_client.connection import (
    COMMAND_BACKOFF,
    STREAM_BACKOFF,
    Backoff,
    new_request_id,
    open_channel,
)
from goti_client.errors import AuthenticationError, Reason, error_from_rpc
from goti_client.events import Rematch, TableEvent
from goti_client.identity import Identity, load_identity, save_identity
from goti_client.matchmaking import MatchmakingCalls
from goti_client.tables import (
    LobbyTable,
    Me,
    Opponent,
    Player,
    Record,
    StartingPlayer,
    Table,
)
from goti_client.watches import LobbyWatch, ReconnectingStream, TableWatch

RequestT = TypeVar("RequestT")
ResponseT = TypeVar("ResponseT")

DEFAULT_TIMEOUT: Final = 10.0
"""Seconds a unary call may take, all its tries together."""
RETRY_CODES: Final = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        # Not the app's doing: a call the app cancels raises asyncio.CancelledError. A server
        # stopping ends CANCELLED the calls it had taken in but not begun, and those it cuts
        # off at the end of its grace period; whether they were done, only a retry tells.
        grpc.StatusCode.CANCELLED,
    }
)
LOBBY_PAGE_LIMIT: Final = 200

MoveLike = Move | Sequence[int] | str
"""A move as :meth:`GotiClient.play` takes it: a rules Move, a path of squares, or notation."""


class GotiClient(MatchmakingCalls):
    """A connection to Goti's public API, acting for one player (or for nobody: a spectator).

    Build one with :func:`connect`.  Safe to share between tasks of one event loop.  Play
    online now (``seek``, ``leaderboard``) is in :mod:`goti_client.matchmaking`.
    """

    def __init__(
        self,
        channel: grpc.aio.Channel,
        *,
        identity: Identity | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        command_backoff: Backoff = COMMAND_BACKOFF,
        stream_backoff: Backoff = STREAM_BACKOFF,
        owns_channel: bool = False,
    ) -> None:
        self._channel = channel
        self._tables = tables_pb2_grpc.TablesServiceStub(channel)
        self._players = players_pb2_grpc.PlayersServiceStub(channel)
        self._matchmaking = MatchmakingServiceStub(channel)
        self._identity = identity
        self._timeout = timeout
        self._command_backoff = command_backoff
        self._stream_backoff = stream_backoff
        self._owns_channel = owns_channel
        self._seqs: dict[str, int] = {}
        self._variants: dict[str, Variant] = {}
        self._watches: weakref.WeakSet[ReconnectingStream[Any, Any]] = weakref.WeakSet()

    # -- lifecycle -------------------------------------------------------------------------

    async def close(self) -> None:
        """End every watch and seek opened here, and close the channel if the client opened it."""
        for watch in list(self._watches):
            watch.stop()
        if self._owns_channel:
            await self._channel.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    # -- who -------------------------------------------------------------------------------

    @property
    def identity(self) -> Identity | None:
        """The player this client acts for, with its token; None for a spectator."""
        return self._identity

    @property
    def player(self) -> Player | None:
        """The player this client acts for; None for a spectator."""
        if self._identity is None:
            return None
        return Player(self._identity.player_id, self._identity.display_name)

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        if self._identity is None:
            return ()
        return (("authorization", f"Bearer {self._identity.token}"),)

    async def create_guest(self, display_name: str = "") -> Identity:
        """Create a guest player and act for it from now on; returns it with its token
        (shown only this once: keep it)."""
        response = await self._call(
            self._players.CreateGuest,
            players_pb2.CreateGuestRequest(display_name=display_name),
            # Without a request id a retry after a slow reply would make a second guest; one
            # after a cut-off call may too, rarely, and a guest nobody uses expires.
            retry_codes=frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED}),
            metadata=(),
        )
        self._identity = Identity(
            response.player.player_id, response.player.display_name, response.player_token
        )
        return self._identity

    async def sign_in(self, token: str) -> Me:
        """Act for the player whose token this is, after checking it with the server."""
        response = await self._call(
            self._players.GetMe,
            players_pb2.GetMeRequest(),
            metadata=(("authorization", f"Bearer {token}"),),
        )
        me = wire.me_from_proto(response)
        self._identity = Identity(me.player.player_id, me.player.display_name, token)
        return me

    async def me(self) -> Me:
        """The player this client acts for: its streaks against the computer, its ratings."""
        response = await self._call(self._players.GetMe, players_pb2.GetMeRequest())
        return wire.me_from_proto(response)

    async def set_display_name(self, display_name: str) -> Player:
        """Change the player's name (tables already seated keep the old one)."""
        response = await self._call(
            self._players.SetDisplayName,
            players_pb2.SetDisplayNameRequest(display_name=display_name),
        )
        player = wire.player_from_proto(response.player)
        if self._identity is not None:
            self._identity = Identity(player.player_id, player.display_name, self._identity.token)
        return player

    # -- tables ----------------------------------------------------------------------------

    async def create_table(
        self,
        *,
        variant: Variant = ENGLISH,
        opponent: Opponent = Opponent.HUMAN,
        starting_player: StartingPlayer = StartingPlayer.RANDOM,
        public: bool = False,
        turn_timer_seconds: int = 0,
        request_id: str | None = None,
    ) -> Table:
        """Create a table and sit at it as player 1.  Against the computer or in
        pass-and-play it is playing at once; else it waits for a person to join by its code."""
        response = await self._call(
            self._tables.CreateTable,
            tables_pb2.CreateTableRequest(
                request_id=request_id or new_request_id(),
                variant=wire.variant_to_proto(variant),
                starting_player=wire.starting_player_to_proto(starting_player),
                opponent=wire.opponent_to_proto(opponent),
                visibility=wire.visibility_to_proto(public),
                turn_timer_seconds=turn_timer_seconds,
            ),
        )
        return self._seen(wire.table_from_proto(response.table, response.your_role))

    async def join_table(self, code: str, *, request_id: str | None = None) -> Table:
        """Take the open seat of the table with this code (case, spaces and dashes ignored)."""
        response = await self._call(
            self._tables.JoinTable,
            tables_pb2.JoinTableRequest(request_id=request_id or new_request_id(), code=code),
        )
        return self._seen(wire.table_from_proto(response.table, response.your_role))

    async def get_table(self, table_id: str = "", *, code: str = "") -> Table:
        """A table as of now, with the caller's role there: by its id, or by its ``code`` as
        typed or its whole join link (to watch a table known only by what its players were
        shown, watch the ``table_id`` this returns)."""
        response = await self._call(
            self._tables.GetTable, tables_pb2.GetTableRequest(table_id=table_id, code=code)
        )
        return self._seen(wire.table_from_proto(response.table, response.your_role))

    async def list_tables(
        self, variant: Variant | None = None, *, limit: int = LOBBY_PAGE_LIMIT
    ) -> list[LobbyTable]:
        """The open public tables, newest first, at most ``limit`` (of ``variant`` only, if
        given)."""
        tables: list[LobbyTable] = []
        page_token = ""
        while len(tables) < limit:
            response = await self._call(
                self._tables.ListTables,
                tables_pb2.ListTablesRequest(
                    variant=wire.variant_to_proto(variant),
                    page_size=min(limit - len(tables), LOBBY_PAGE_LIMIT),
                    page_token=page_token,
                ),
            )
            tables.extend(wire.lobby_table_from_proto(table) for table in response.tables)
            page_token = response.next_page_token
            if not page_token or not response.tables:
                break
        return tables[:limit]

    def watch_lobby(
        self, variant: Variant | None = None, *, give_up_after: float | None = None
    ) -> LobbyWatch:
        """The lobby, live (see :class:`~goti_client.watches.LobbyWatch`)."""
        watch = LobbyWatch(
            self._tables,
            tables_pb2.WatchLobbyRequest(variant=wire.variant_to_proto(variant)),
            metadata=self._metadata(),
            backoff=self._stream_backoff,
            give_up_after=give_up_after,
        )
        self._watches.add(watch)
        return watch

    def watch(
        self, table_id: str, after_seq: int = 0, *, give_up_after: float | None = None
    ) -> TableWatch:
        """A table, live, from a snapshot (``after_seq`` 0) or from the event after
        ``after_seq`` (see :class:`~goti_client.watches.TableWatch`)."""
        watch = TableWatch(
            self._tables,
            table_id,
            after_seq=after_seq,
            metadata=self._metadata(),
            variant_of=self._variant_of,
            on_table=self._seen,
            on_seq=self._saw_seq,
            backoff=self._stream_backoff,
            give_up_after=give_up_after,
        )
        self._watches.add(watch)
        return watch

    async def record(self, table_id: str) -> Record:
        """The table's game record with its PDN."""
        response = await self._call(
            self._tables.GetRecord, tables_pb2.GetRecordRequest(table_id=table_id)
        )
        return wire.record_from_proto(response)

    def last_seq(self, table_id: str) -> int | None:
        """The latest seq of the table this client has seen, if it has seen the table."""
        return self._seqs.get(table_id)

    # -- commands --------------------------------------------------------------------------

    async def play(
        self,
        table_id: str,
        move: MoveLike,
        *,
        side: Color | None = None,
        expected_seq: int | None = None,
        request_id: str | None = None,
    ) -> tuple[TableEvent, ...]:
        """Play one whole move: a :class:`~goti.rules.Move`, its path of squares (every
        landing square of a multiple jump), or notation (``11-15``, ``22x15x8``, ``c3:e5``).

        ``side`` is for pass-and-play (the side to move by default).  Returns the events
        the move appended: a MovePlayed, and a GameOver when it ended the game.
        """
        request = tables_pb2.PlayRequest(
            table_id=table_id,
            request_id=request_id or new_request_id(),
            expected_seq=await self._expected_seq(table_id, expected_seq),
            side=wire.side_to_proto(side),
        )
        if isinstance(move, str):
            request.notation = move
        else:
            path = move.path if isinstance(move, Move) else move
            request.path.CopyFrom(wire.move_path_to_proto(path))
        response = await self._call(self._tables.Play, request)
        return await self._events(table_id, response.events)

    async def offer_draw(
        self,
        table_id: str,
        *,
        side: Color | None = None,
        expected_seq: int | None = None,
        request_id: str | None = None,
    ) -> tuple[TableEvent, ...]:
        """Offer a draw, on the caller's turn, before moving."""
        response = await self._call(
            self._tables.OfferDraw,
            tables_pb2.OfferDrawRequest(
                table_id=table_id,
                request_id=request_id or new_request_id(),
                expected_seq=await self._expected_seq(table_id, expected_seq),
                side=wire.side_to_proto(side),
            ),
        )
        return await self._events(table_id, response.events)

    async def answer_draw(
        self,
        table_id: str,
        accept: bool,
        *,
        side: Color | None = None,
        expected_seq: int | None = None,
        request_id: str | None = None,
    ) -> tuple[TableEvent, ...]:
        """Accept or decline the opponent's open draw offer, on the caller's turn."""
        response = await self._call(
            self._tables.AnswerDraw,
            tables_pb2.AnswerDrawRequest(
                table_id=table_id,
                request_id=request_id or new_request_id(),
                expected_seq=await self._expected_seq(table_id, expected_seq),
                side=wire.side_to_proto(side),
                accept=accept,
            ),
        )
        return await self._events(table_id, response.events)

    async def resign(
        self,
        table_id: str,
        *,
        side: Color | None = None,
        expected_seq: int | None = None,
        request_id: str | None = None,
    ) -> tuple[TableEvent, ...]:
        """Resign, on the caller's turn: the opponent wins."""
        response = await self._call(
            self._tables.Resign,
            tables_pb2.ResignRequest(
                table_id=table_id,
                request_id=request_id or new_request_id(),
                expected_seq=await self._expected_seq(table_id, expected_seq),
                side=wire.side_to_proto(side),
            ),
        )
        return await self._events(table_id, response.events)

    async def take_back(
        self, table_id: str, *, expected_seq: int | None = None, request_id: str | None = None
    ) -> tuple[TableEvent, ...]:
        """Against the computer: take back the caller's last move and the computer's reply."""
        response = await self._call(
            self._tables.TakeBack,
            tables_pb2.TakeBackRequest(
                table_id=table_id,
                request_id=request_id or new_request_id(),
                expected_seq=await self._expected_seq(table_id, expected_seq),
            ),
        )
        return await self._events(table_id, response.events)

    async def rematch(
        self, table_id: str, *, expected_seq: int | None = None, request_id: str | None = None
    ) -> Rematch:
        """After the game: ask for a rematch with colours swapped.  It starts at a new table
        against the computer, or once both players have asked."""
        response = await self._call(
            self._tables.Rematch,
            tables_pb2.RematchRequest(
                table_id=table_id,
                request_id=request_id or new_request_id(),
                expected_seq=await self._expected_seq(table_id, expected_seq),
            ),
        )
        events = await self._events(table_id, response.events)
        table = (
            self._seen(wire.table_from_proto(response.rematch_table, response.your_role))
            if response.HasField("rematch_table")
            else None
        )
        return Rematch(events, table)

    # -- plumbing --------------------------------------------------------------------------

    async def _call(
        self,
        method: grpc.aio.UnaryUnaryMultiCallable[RequestT, ResponseT],
        request: RequestT,
        *,
        retry_codes: frozenset[grpc.StatusCode] = RETRY_CODES,
        metadata: tuple[tuple[str, str], ...] | None = None,
    ) -> ResponseT:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout
        attempt = 0
        while True:
            try:
                return await method(
                    request,
                    timeout=max(deadline - loop.time(), 0.0),
                    metadata=self._metadata() if metadata is None else metadata,
                )
            except grpc.aio.AioRpcError as error:
                delay = self._command_backoff.delay(attempt)
                if error.code() not in retry_codes or loop.time() + delay >= deadline:
                    raise error_from_rpc(error) from None
            await asyncio.sleep(delay)
            attempt += 1

    def _seen(self, table: Table) -> Table:
        self._variants[table.table_id] = table.variant
        self._saw_seq(table.table_id, table.seq)
        return table

    def _saw_seq(self, table_id: str, seq: int) -> None:
        if seq > self._seqs.get(table_id, -1):
            self._seqs[table_id] = seq

    async def _variant_of(self, table_id: str) -> Variant:
        variant = self._variants.get(table_id)
        if variant is None:
            response = await self._call(
                self._tables.GetTable, tables_pb2.GetTableRequest(table_id=table_id)
            )
            variant = wire.table_from_proto(response.table, response.your_role).variant
            self._variants[table_id] = variant
        return variant

    async def _expected_seq(self, table_id: str, given: int | None) -> int:
        if given is not None:
            return given
        seen = self._seqs.get(table_id)
        if seen is None:
            seen = (await self.get_table(table_id)).seq
        return seen

    async def _events(
        self, table_id: str, messages: Sequence[tables_pb2.TableEvent]
    ) -> tuple[TableEvent, ...]:
        events = wire.events_from_proto(messages, await self._variant_of(table_id))
        if events:
            self._saw_seq(table_id, events[-1].seq)
        return events


class Connection:
    """A client being opened: ``await`` it for a :class:`GotiClient` (then close it), or
    use it with ``async with`` (closed on the way out)."""

    def __init__(
        self,
        target: str,
        token: str | None,
        *,
        identity_file: Path | str | None,
        display_name: str,
        guest: bool,
        credentials: grpc.ChannelCredentials | None,
        timeout: float,
        stream_backoff: Backoff,
    ) -> None:
        self._target = target
        self._token = token
        self._identity_file = None if identity_file is None else Path(identity_file).expanduser()
        self._display_name = display_name
        self._guest = guest
        self._credentials = credentials
        self._timeout = timeout
        self._stream_backoff = stream_backoff
        self._client: GotiClient | None = None

    def __await__(self) -> Generator[Any, None, GotiClient]:
        return self._open().__await__()

    async def __aenter__(self) -> GotiClient:
        self._client = await self._open()
        return self._client

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._client is not None:
            await self._client.close()

    async def _open(self) -> GotiClient:
        client = GotiClient(
            open_channel(self._target, credentials=self._credentials),
            timeout=self._timeout,
            stream_backoff=self._stream_backoff,
            owns_channel=True,
        )
        try:
            await self._sign_in(client)
        except BaseException:
            await client.close()
            raise
        return client

    async def _sign_in(self, client: GotiClient) -> None:
        if self._token is not None:
            await client.sign_in(self._token)
            return
        kept = load_identity(self._identity_file) if self._identity_file is not None else None
        if kept is not None:
            try:
                await client.sign_in(kept.token)
            except AuthenticationError as error:
                # The server no longer knows the player (its data was reset): as the
                # contract advises, start again as a new guest.
                if error.reason is not Reason.INVALID_TOKEN:
                    raise
            else:
                if client.identity != kept:
                    self._keep(client.identity)
                return
        if self._guest or kept is not None:
            self._keep(await client.create_guest(self._display_name))

    def _keep(self, identity: Identity | None) -> None:
        if self._identity_file is not None and identity is not None:
            save_identity(self._identity_file, identity)


def connect(
    target: str,
    token: str | None = None,
    *,
    identity_file: Path | str | None = None,
    display_name: str = "",
    guest: bool = True,
    credentials: grpc.ChannelCredentials | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    stream_backoff: Backoff = STREAM_BACKOFF,
) -> Connection:
    """Open a client of Goti's public API at ``target`` (``host:port``)::

        async with goti_client.connect("localhost:50051") as goti:
            table = await goti.create_table(opponent=Opponent.COMPUTER_EASY)

    The client acts for the player whose ``token`` is given; else for the one kept in
    ``identity_file`` (a JSON file, mode 0600); else, with ``guest`` (the default), for a
    new guest player named ``display_name`` (generated when empty), kept in
    ``identity_file`` when one is named.  With ``guest=False`` and no identity it acts for
    nobody: it may watch and read, not play.  A kept identity that the server no longer
    knows is replaced by a new guest.

    ``timeout`` is the deadline of each unary call, in seconds: until then a call that found
    Goti unavailable, or was cut off, is tried again (commands with the same request id).
    """
    return Connection(
        target,
        token,
        identity_file=identity_file,
        display_name=display_name,
        guest=guest,
        credentials=credentials,
        timeout=timeout,
        stream_backoff=stream_backoff,
    )
