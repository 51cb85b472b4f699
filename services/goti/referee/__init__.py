"""The referee: Goti's authority on the rules, served over gRPC as ``RefereeService``.

Stateless: every call brings the whole game state and every answer carries the new one.
:mod:`goti.referee.consistency` checks what the rules library's own cheap checks leave open,
:mod:`goti.referee.actions` starts games, applies actions and writes PDN, and
:mod:`goti.referee.servicer` only translates between protobuf and those two and maps errors to
status codes.  ``python -m goti.referee`` (or ``goti serve referee``) runs it.
"""
