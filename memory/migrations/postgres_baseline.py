"""The PostgreSQL schema as SQLite's migrations m001 … m040 leave it, created in one step on an empty database.

A PostgreSQL store starts at m040: this baseline creates what those migrations made (ids numbered by the server,
times as double precision, foreign keys deferrable for the erasure's merges) and records their names, so every
later migration is numbered alike on both stores and written for both (`tx.dialect`). Instead of FTS5's tables
the documents carry a generated tsvector (the German and the English configuration, GIN-indexed); instead of the
trigram table a word part is found in the texts the search keeps of the scope (`ScopeArrays.holding`), which needs
no extension. `fold()` is SQLite's custom function of the same name.
"""
from __future__ import annotations

from memory.migrations import postgres_m001, postgres_m013

BASELINE_UPTO = "m040_scope_changes"

# The search's own parts: the documents' words (instead of FTS5's tables) and the change counts' triggers.
SEARCH = """
ALTER TABLE docs ADD COLUMN words tsvector
    GENERATED ALWAYS AS (to_tsvector('german', text) || to_tsvector('english', text)) STORED;
-- fastupdate off: a GIN pending list (up to 4 MB of unsorted entries after writes) is read by every search and makes
-- the planner scan the scope's rows instead (4k notes: 2-3 ms a word against 0.1-0.2 ms once the list is merged).
CREATE INDEX docs_words ON docs USING gin (words) WITH (fastupdate = off);
CREATE INDEX docs_scope_id ON docs(scope_id, id);
CREATE FUNCTION docs_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO scope_changes AS c(scope_id, added) VALUES (NEW.scope_id, 1)
            ON CONFLICT (scope_id) DO UPDATE SET added = c.added + 1;
        RETURN NEW;
    END IF;
    INSERT INTO scope_changes AS c(scope_id, changed) VALUES (OLD.scope_id, 1)
        ON CONFLICT (scope_id) DO UPDATE SET changed = c.changed + 1;
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO scope_changes AS c(scope_id, changed) VALUES (NEW.scope_id, 1)
            ON CONFLICT (scope_id) DO UPDATE SET changed = c.changed + 1;
        RETURN NEW;
    END IF;
    RETURN OLD;
END $$;
CREATE TRIGGER docs_added AFTER INSERT ON docs FOR EACH ROW EXECUTE FUNCTION docs_counted();
CREATE TRIGGER docs_deleted AFTER DELETE ON docs FOR EACH ROW EXECUTE FUNCTION docs_counted();
CREATE TRIGGER docs_rewritten AFTER UPDATE OF scope_id, source, text, content_hash, created_at ON docs
    FOR EACH ROW EXECUTE FUNCTION docs_counted();
"""

SCHEMA = postgres_m001.TABLES + postgres_m013.TABLES + SEARCH

