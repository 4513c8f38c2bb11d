"""The SQL mnemo writes (SQLite's dialect) as PostgreSQL reads it: a pure rewrite of the few constructs that differ.

The modules of memory/ write one SQL for both stores. What SQLite and PostgreSQL share is written as is (upserts
with ON CONFLICT, RETURNING, window functions, recursive queries); what differs in spelling only is rewritten here,
once per statement text (cached): `?` placeholders, `INSERT OR IGNORE`, two-argument max()/min(), `instr`,
`IS ?`, the unary plus that steers SQLite's planner, `json_each` over a list of ids, the deferral of foreign keys.
What differs in substance (full-text search, the schema, the catalogue) is a method of the transaction
(`memory.storage.db.Tx`) or a branch on `tx.dialect` where it is used.
"""
from __future__ import annotations

import functools
import re

# A string literal, a quoted name, or one of the constructs rewritten below (placeholders and % signs).
_TOKEN = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|\?|%")
_OR_IGNORE = re.compile(r"^\s*INSERT\s+OR\s+IGNORE\s+INTO\b", re.IGNORECASE)
_OR_REPLACE = re.compile(r"^\s*INSERT\s+OR\s+REPLACE\s+INTO\s+(\w+)\s*\(([^)]*)\)", re.IGNORECASE)
# The key SQLite's INSERT OR REPLACE replaces by, per table that mnemo writes so.
REPLACE_KEYS = {"meta": ("key",), "embedding_calibrations": ("model",), "rhythm": ("scope_id", "weekday", "hour"),
                "scope_changes": ("scope_id",)}
_PAIR = re.compile(r"\b(max|min)\(([^(),]+),([^(),]+)\)", re.IGNORECASE)
_INSTR = re.compile(r"\binstr\(", re.IGNORECASE)
_IS_PARAM = re.compile(r"\bIS\s+(NOT\s+)?\?", re.IGNORECASE)
_UNARY_PLUS = re.compile(r"(?<=[\s(=])\+(?=[a-z_]+\.[a-z_]+)")
# json_each over a JSON list of ids (a parameter or a column), joined by its `value`.
_JSON_EACH = re.compile(r"json_each\(([^()]+)\)\s+(\w+)")
_DEFER = re.compile(r"^\s*PRAGMA\s+defer_foreign_keys\s*=\s*ON\s*$", re.IGNORECASE)
_VEC_BIT = re.compile(r"\bvec_bit\(\?\)")  # the bits go into a bytea column as they are
# SQLite takes an empty list; `'{}'` takes the type of what it is compared with.
_EMPTY_IN = re.compile(r"\b(NOT\s+)?IN\s*\(\s*\)", re.IGNORECASE)
_RETURNING = re.compile(r"\bRETURNING\b", re.IGNORECASE)
_CROSS_ON = re.compile(r"\bCROSS\s+JOIN\s+(\w+\s+\w+)\s+ON\b", re.IGNORECASE)  # SQLite's CROSS JOIN fixes the order


@functools.lru_cache(maxsize=4096)
def to_postgres(sql: str) -> str:
    """The statement in PostgreSQL's dialect, with psycopg's `%s` placeholders (a literal % doubled)."""
    if _DEFER.match(sql):
        return "SET CONSTRAINTS ALL DEFERRED"
    upsert = ""
    replace = _OR_REPLACE.match(sql)
    if replace:
        table, columns = replace.group(1), [c.strip() for c in replace.group(2).split(",")]
        keys = REPLACE_KEYS[table]
        sets = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in keys)
        upsert = f" ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {sets}"
        sql = f"INSERT INTO {table}({replace.group(2)})" + sql[replace.end():]
    ignore = bool(_OR_IGNORE.match(sql))
    if ignore:
        sql = _OR_IGNORE.sub("INSERT INTO", sql, count=1)
    sql = _IS_PARAM.sub(lambda m: "IS DISTINCT FROM ?" if m.group(1) else "IS NOT DISTINCT FROM ?", sql)
    sql = _PAIR.sub(lambda m: f"{'GREATEST' if m.group(1).lower() == 'max' else 'LEAST'}({m.group(2)},{m.group(3)})",
                    sql)
    sql = _INSTR.sub("strpos(", sql)
    sql = _VEC_BIT.sub("?", sql)
    sql = _EMPTY_IN.sub(lambda m: "<> ALL('{}')" if m.group(1) else "= ANY('{}')", sql)
    sql = _UNARY_PLUS.sub("", sql)
    sql = _JSON_EACH.sub(
        lambda m: f"LATERAL (SELECT value::bigint AS value FROM json_array_elements_text(({m.group(1)})::json) AS"
                  f" v(value)) {m.group(2)}", sql)
    sql = _CROSS_ON.sub(r"JOIN \1 ON", sql)
    sql = _TOKEN.sub(_placeholder, sql)
    if ignore:
        sql = _before_returning(sql, " ON CONFLICT DO NOTHING")
    if upsert:
        sql = _before_returning(sql, upsert)
    return sql


def _placeholder(match: re.Match[str]) -> str:
    token = match.group(0)
    if token == "?":
        return "%s"
    if token == "%":
        return "%%"
    return token.replace("%", "%%") if token.startswith("'") else token


def _before_returning(sql: str, clause: str) -> str:
    """sql with clause added at its end, or before its RETURNING."""
    found = _RETURNING.search(sql)
    if found is None:
        return sql.rstrip().rstrip(";") + clause
    return sql[:found.start()].rstrip() + clause + " " + sql[found.start():]


def insert_target(sql: str) -> str | None:
    """The table an INSERT statement writes to (None for anything else)."""
    found = re.match(r"^\s*INSERT\s+(?:OR\s+\w+\s+)?INTO\s+([\"\w]+)", sql, re.IGNORECASE)
    return found.group(1).strip('"') if found else None


def returns(sql: str) -> bool:
    """Whether the statement has a RETURNING clause already."""
    return _RETURNING.search(sql) is not None
