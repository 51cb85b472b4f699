"""Goti's gRPC API: the generated ``goti.api.v1`` messages and services, and
:mod:`goti.api.convert`, the one mapping between them and :mod:`goti.rules`.

The protos live in ``proto/goti/api/v1``; ``python proto/build.py`` regenerates ``v1``.
"""
