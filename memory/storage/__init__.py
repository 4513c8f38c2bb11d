"""Where the bytes live: SQLite or PostgreSQL, their dialects, backups, and the leases and locks workers share."""
