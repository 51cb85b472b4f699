"""Goti's gRPC API: the generated ``goti.api.v1`` messages and services;
:mod:`goti.api.error_status`, the error model every service and the client SDK speak; and
:mod:`goti.api.convert`, the one mapping between the messages and :mod:`goti.rules`.

The protos live in ``proto/goti/api/v1``; ``python proto/build.py`` regenerates ``v1``.
"""
