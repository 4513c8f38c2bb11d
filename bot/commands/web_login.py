"""/web: a one-time link to the private web page of the person's memory."""
from __future__ import annotations

import logging

from bot.commands.invocation import Call
from bot.commands.web_links import LINK_MINUTES
from bot.exchange import Reply
from bot.texts import counted
from memory import is_group_scope

log = logging.getLogger(__name__)


async def web(call: Call, args: str) -> Reply:
    """Send a login link (10 minutes, once); in a group, where everyone would see it, send none."""
    if call.web is None:
        log.info("/web asked, but the web page is off: set MNEMO_WEB_LISTEN (and MNEMO_WEB_BASE_URL)")
        return Reply((call.t("web_off"),))
    if is_group_scope(call.scope.user_id):
        return Reply((call.t("web_in_group"),))
    link = await call.web.link(call.scope)
    return Reply((call.t("web_link", link=link, minutes=counted(call.lang, LINK_MINUTES, "minutes")),))
