"""Learned behaviour rules: proposed as pending, active only after the person's yes."""
from __future__ import annotations

import re
import time
from difflib import SequenceMatcher
from typing import Any

from memory.ledgers import audit
from memory.models import LearnedRule, Scope, ts
from memory.storage.db import Database

NEGATIONS = frozenset({"nicht", "kein", "keine", "keinen", "keinem", "keiner", "nie", "niemals", "ohne", "not", "no",
                       "never", "don't", "dont", "without"})
_WORD = re.compile(r"[\w']+")
SIMILAR = 0.9  # how alike two rules' words must be, as difflib's ratio, to be the same rule with a typo or two


def same_rule(a: str, b: str) -> bool:
    """Whether two rules say the same: the same words up to case and punctuation, nearly the same letters, or the
    same word stems in another order ("Keine Emojis verwenden." and "Verwende keine Emojis"); never two that
    differ in a negation ("Benutze Emojis" and "Benutze keine Emojis")."""
    wa, wb = _WORD.findall(a.casefold()), _WORD.findall(b.casefold())
    if not wa or not wb or NEGATIONS.intersection(wa) != NEGATIONS.intersection(wb):
        return False
    if wa == wb or SequenceMatcher(None, " ".join(wa), " ".join(wb)).ratio() >= SIMILAR:
        return True
    return {w[:5] for w in wa} == {w[:5] for w in wb}


class Rules:
    """Learned behaviour rules: proposed as pending, active only after the user's yes."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def propose(self, scope: Scope, text: str) -> LearnedRule:
        """Store a pending rule. A new proposal replaces an older pending one, which nobody answered: it is
        discarded (`discard_pending`), never kept as rejected, since nobody said no."""
        now = time.time()
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM learned_rules WHERE scope_id = ? AND status = 'pending'", (scope.id,))
            rule_id = await tx.execute(
                "INSERT INTO learned_rules(scope_id, text, status, created_at) VALUES (?, ?, 'pending', ?)",
                (scope.id, text, now),
            )
        return LearnedRule(rule_id, text, "pending", ts(now))  # type: ignore[arg-type]

    async def get(self, scope: Scope, rule_id: int) -> LearnedRule:
        """One rule of this scope, or NotFound."""
        async with self.db.reading() as tx:
            r = await tx.scoped_row("learned_rules", "id, text, status, created_at", scope.id, rule_id,
                                    f"rule {rule_id}")
        return LearnedRule(r[0], r[1], r[2], ts(r[3]))  # type: ignore[arg-type]

    async def pending(self, scope: Scope) -> LearnedRule | None:
        """The rule waiting for a yes or no, if any."""
        rules = await self.list(scope, "pending")
        return rules[-1] if rules else None

    async def list(self, scope: Scope, status: str | None = None) -> list[LearnedRule]:
        """Rules of the scope (all but rejected ones unless a status is given), oldest first."""
        sql = "SELECT id, text, status, created_at FROM learned_rules WHERE scope_id = ?"
        args: list[Any] = [scope.id]
        sql += " AND status = ?" if status else " AND status != 'rejected'"
        if status:
            args.append(status)
        async with self.db.reading() as tx:
            rows = await tx.fetchall(sql + " ORDER BY id", args)
        return [LearnedRule(r[0], r[1], r[2], ts(r[3])) for r in rows]  # type: ignore[arg-type]

    async def decide(self, scope: Scope, rule_id: int, status: str, *, reason: str = "") -> LearnedRule:
        """Set a rule's status (active, disabled, rejected), audited."""
        before = await self.get(scope, rule_id)
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE learned_rules SET status = ?, decided_at = ? WHERE id = ? AND scope_id = ?",
                             (status, time.time(), rule_id, scope.id))
            await audit.record(tx, scope.id, audit.new_processing("rule"), "update", "rule", rule_id,
                               before=before, after={"status": status}, reason=reason)
        return await self.get(scope, rule_id)

    async def discard_pending(self, scope: Scope, rule_id: int) -> bool:
        """Discard a proposal nobody answered (it expired, or a newer one replaced it): it was never a rule, and no
        one said no, so nothing of it is kept (nor audited: an /undo never brings it back). False when it was
        decided meanwhile."""
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM learned_rules WHERE id = ? AND scope_id = ? AND status = 'pending'",
                             (rule_id, scope.id))
            return await tx.changes() > 0

    async def delete(self, scope: Scope, rule_id: int) -> LearnedRule:
        """Delete a rule, audited."""
        before = await self.get(scope, rule_id)
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM learned_rules WHERE id = ? AND scope_id = ?", (rule_id, scope.id))
            await audit.record(tx, scope.id, audit.new_processing("rule"), "delete", "rule", rule_id, before=before)
        return before
