"""``python -m goti.referee``: the referee service, configured from ``GOTI_*`` variables."""

from goti import serving
from goti.referee.servicer import RefereeService

if __name__ == "__main__":
    service = RefereeService()
    serving.main("referee", service.bind, drain=service.drain)
