"""``python -m goti.referee``: the referee service, configured from ``GOTI_*`` variables."""

from goti import serving
from goti.referee.servicer import bind

if __name__ == "__main__":
    serving.main("referee", bind)
