"""The private web page: who is looking (a session from a login link), what they may see, and the page routes.

Every page is a `Handler` taking the request and the `Viewer`; `signed_in` makes sure there is one:
a valid session cookie (else a page saying how to log in), the memory shown is the session's own scope or,
for mnemo's admins only, a group's (anyone else: 404), and every POST carries the session's form token
(else 403). A page module (bot/web_page/pages/) declares its routes as `Page`s; they are mounted twice, under
/web for the person's own memory and under /web/g/<scope id> for a group's.
"""
from __future__ import annotations

import hmac
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route

from bot.commands.invocation import Call
from bot.commands.runner import Commands
from bot.texts import t
from bot.web_page.render import Viewer, problem_page
from memory import GROUP_TITLE, NotFound, Scope, WebSession, is_group_scope

Handler = Callable[[Request, Viewer], Awaitable[Response]]

SECURE_COOKIE = "__Host-mnemo"  # behind HTTPS: the browser keeps it only from a secure page, for this host
PLAIN_COOKIE = "mnemo"
MESSENGERS = {"tg": "Telegram", "mx": "Matrix"}  # a group scope's prefix, as people call its messenger


@dataclass(frozen=True)
class Page:
    """One route of the page: its path below /web, its handler, its methods."""

    path: str
    handler: Handler
    methods: tuple[str, ...] = ("GET",)


@dataclass
class Site:
    """What the page's handlers work with: the commands (engine, scheduler, store) and how sessions are kept."""

    commands: Commands
    admins: frozenset[str] = frozenset()  # mnemo's admins: they may see the memory of groups
    secure: bool = False  # served over HTTPS (behind a proxy): the cookie is Secure
    session_days: float = 7.0
    clock: Callable[[], float] = field(default=time.time)
    nav: tuple[tuple[str, str], ...] = ()  # the menu, filled from the sections by `routes.page_routes`

    @property
    def cookie(self) -> str:
        """The session cookie's name."""
        return SECURE_COOKIE if self.secure else PLAIN_COOKIE

    def call(self, scope: Scope, lang: str) -> Call:
        """A command call for the scope shown, so the page changes memory exactly as the chat would."""
        commands = self.commands
        return Call(commands.engine, commands.scheduler, scope, lang, commands.web)

    async def session(self, request: Request) -> WebSession | None:
        """The request's session, from its cookie (None: not logged in, or expired)."""
        token = request.cookies.get(self.cookie)
        if not token:
            return None
        return await self.commands.store.web.session(token, self.clock())

    async def shown(self, session: WebSession, group: int | None) -> Scope | None:
        """The memory this session may look at: its own, or a group's of the same companion for an admin."""
        if group is None:
            return session.scope
        if session.scope.user_id not in self.admins:
            return None
        scope = await self.commands.store.web.scope_by_id(group)
        if scope is None or scope.companion_id != session.scope.companion_id or not is_group_scope(scope.user_id):
            return None
        return scope

    async def groups(self, session: WebSession) -> list[Scope]:
        """The groups whose memory this session may look at (none unless its person is one of mnemo's admins)."""
        if session.scope.user_id not in self.admins:
            return []
        scopes = await self.commands.store.scopes(session.scope.companion_id)
        return [s for s in scopes if is_group_scope(s.user_id)]

    async def names(self, scopes: Sequence[Scope], lang: str) -> dict[int, str]:
        """The groups' names as their messenger last gave them; a group without one by its messenger and number."""
        state, names = self.commands.store.state, {}
        for scope in scopes:
            title = await state.get(scope, GROUP_TITLE)
            messenger = MESSENGERS.get(scope.user_id.split(":", 1)[0], "")
            names[scope.id] = str(title) if title else t(lang, "page_group_unnamed", messenger=messenger,
                                                         number=scope.id)
        return names

    def lang(self, session: WebSession) -> str:
        """The session's language: its own choice, else the deployment's."""
        return session.lang or self.commands.lang


def form_token_ok(given: object, session: WebSession) -> bool:
    """Whether a form's token is the session's (compared in constant time)."""
    return isinstance(given, str) and bool(given) and hmac.compare_digest(given.encode(), session.csrf.encode())


def signed_in(site: Site, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """The handler behind the session, group and form-token checks (see the module's docstring)."""

    async def endpoint(request: Request) -> Response:
        session = await site.session(request)
        lang = site.commands.lang if session is None else site.lang(session)
        if session is None:
            return problem_page(lang, "page_logged_out", 401, back=None)
        group = request.path_params.get("group")
        scope = await site.shown(session, group)
        if scope is None:
            return problem_page(lang, "page_not_found", 404)
        base = "/web" if group is None else f"/web/g/{group}"
        if request.method == "POST":
            form = await request.form()
            if not form_token_ok(form.get("csrf") or request.headers.get("x-csrf-token"), session):
                return problem_page(lang, "page_forbidden", 403, back=f"{base}/")
        groups = await site.groups(session)
        viewer = Viewer(session, scope, lang, base, site.call(scope, lang), groups,
                        await site.commands.engine.zone_for(scope), site.commands.engine.config.companion_name,
                        request.url.path, site.nav, await site.names([*groups, scope] if group else groups, lang))
        try:
            if request.method != "POST":
                return await handler(request, viewer)
            # an edit waits for a learning run in flight on any worker, so none writes back what it changes
            async with site.commands.engine.store.learning_locks.hold(scope):
                return await handler(request, viewer)
        except NotFound:
            return problem_page(lang, "page_not_found", 404, back=f"{base}/")

    return endpoint


def mounted(site: Site, pages: Sequence[Page]) -> list[BaseRoute]:
    """The pages under /web (one's own memory) and under /web/g/<id> (a group's, for admins)."""
    async def unknown(request: Request) -> Response:  # a path below /web that names no page: a way back, not a 404
        return problem_page(site.commands.lang, "page_not_found", 404)  # of the framework's bare words

    routes = [Route(p.path, signed_in(site, p.handler), methods=list(p.methods)) for p in pages]
    routes.append(Route("/{rest:path}", unknown, methods=["GET", "POST"]))
    return [Mount("/web/g/{group:int}", routes=routes), Mount("/web", routes=routes)]
