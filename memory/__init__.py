"""What mnemo remembers and how it is found: one SQLite file, vectors and full text inside it."""
