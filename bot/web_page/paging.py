"""Paging through long lists on the web page: which page was asked for, and whether there is a next one."""
from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

SIZE = 20  # items per page


@dataclass(frozen=True)
class Paging:
    """The page asked for (1 is the newest), counted in items of `size`."""

    number: int = 1
    size: int = SIZE

    @property
    def offset(self) -> int:
        """How many items come before this page."""
        return (self.number - 1) * self.size


def paging(request: Request, size: int = SIZE) -> Paging | None:
    """The `page` of the request's query (1 when absent); None when it is no positive number."""
    raw = request.query_params.get("page", "1")
    if not raw.isdigit() or not 0 < int(raw) < 100_000:
        return None
    return Paging(int(raw), size)
